import { boardBench } from "./board";
import { claimBench } from "./claim";
import { engineBench } from "./engine";
import { firstWebhookBench } from "./first-webhook";
import { labelToCardBench } from "./label-to-card";
import { metricsBench } from "./metrics";
import { pollBench } from "./poll";
import { runsListBench } from "./runs-list";
import { sandboxBench } from "./sandbox";
import { scaleBench } from "./scale";
import { statementsBench } from "./statements";

/** Every benchmark, by name, in the order `npm run bench` runs them. */
export const BENCHES: Record<string, (databaseUrl: string) => Promise<void>> = {
  claim: claimBench,
  engine: engineBench,
  statements: statementsBench,
  board: boardBench,
  runs_list: runsListBench,
  scale: scaleBench,
  poll: pollBench,
  sandbox: sandboxBench,
  metrics: metricsBench,
  "first-webhook": firstWebhookBench,
  label_to_card: labelToCardBench,
};
