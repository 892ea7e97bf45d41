import { approveRun, cancelRun, retryRun, type OperatorDeps } from "../runner/operator";
import type { OperatorServices } from "./check-run-actions";

/** The runner's operator services (lib/runner/operator.ts), as the check run actions call them. */
export function runnerOperatorServices(deps: OperatorDeps): OperatorServices {
  return {
    approveRun: (runId, actor) => approveRun(deps, runId, actor),
    retryRun: (runId, actor) => retryRun(deps, runId, actor),
    cancelRun: (runId, actor) => cancelRun(deps, runId, actor),
  };
}
