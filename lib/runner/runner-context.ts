import type { LocalAttempts } from "./local-attempts";
import type { RedisNames } from "./redis-names";
import type { RunnerConfig, RunnerDeps, RunnerLog } from "./runner-deps";
import type { SlotPool } from "./slots";

/** What one worker process's runner holds: its deps, its slots and its running Attempts. */
export interface RunnerContext {
  deps: RunnerDeps;
  config: RunnerConfig;
  names: RedisNames;
  slots: SlotPool;
  local: LocalAttempts;
  log: RunnerLog;
}
