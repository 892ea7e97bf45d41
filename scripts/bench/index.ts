import { burstBench } from "./burst";
import { engineBench } from "./engine";
import { environmentBench } from "./environment";
import { pollBench } from "./poll";
import { scaleBench } from "./scale";

/** Every benchmark, by name, in the order `npm run bench` runs them. */
export const BENCHES: Record<string, (databaseUrl: string) => Promise<void>> = {
  burst: burstBench,
  engine: engineBench,
  scale: scaleBench,
  poll: pollBench,
  environment: environmentBench,
};
