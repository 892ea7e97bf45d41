import { burstBench } from "./burst";
import { engineBench } from "./engine";
import { environmentBench } from "./environment";
import { insightsBench } from "./insights";
import { labelLatencyBench } from "./label-latency";
import { pollBench } from "./poll";
import { retentionBench } from "./retention";
import { scaleBench } from "./scale";

/** Every benchmark, by name, in the order `npm run bench` runs them. */
export const BENCHES: Record<string, (databaseUrl: string) => Promise<void>> = {
  burst: burstBench,
  engine: engineBench,
  scale: scaleBench,
  poll: pollBench,
  environment: environmentBench,
  latency: labelLatencyBench,
  insights: insightsBench,
  retention: retentionBench,
};

/** Names that select several benchmarks: `claim` is every line the claim's speed decides. */
export const BENCH_GROUPS: Record<string, string[]> = {
  claim: ["burst", "engine"],
};
