import { boardBench } from "./board";
import { claimBench } from "./claim";
import { engineBench } from "./engine";
import { metricsBench } from "./metrics";
import { pollBench } from "./poll";
import { sandboxBench } from "./sandbox";
import { scaleBench } from "./scale";

/** Every benchmark, by name, in the order `npm run bench` runs them. */
export const BENCHES: Record<string, (databaseUrl: string) => Promise<void>> = {
  claim: claimBench,
  engine: engineBench,
  board: boardBench,
  scale: scaleBench,
  poll: pollBench,
  sandbox: sandboxBench,
  metrics: metricsBench,
};
