import { NotFoundError } from "../errors";
import type { TriggerKind } from "../loops/config-schema";
import type { StoredConfig } from "../loops/stored-config";
import type { Db } from "../store/kernel/db";
import { loopRuntimesOf, recordLoopPaused, type LoopRuntime } from "../store/items/loop-runtimes";
import { storedConfig, storedConfigsOf } from "../store/items/repository-configs";
import { loopNames } from "./repository-config";

/** A Loop of a repository as the dashboard and the API show it. */
export interface LoopStatus {
  name: string;
  /** null when the Loop's definition is broken and its trigger unknown */
  trigger: TriggerKind | null;
  schedule: { cron: string; tz: string } | null;
  /** false when the config gives this Loop an error: it does not run until fixed */
  valid: boolean;
  paused: boolean;
  pausedBy: string | null;
  lastPolledAt: Date | null;
  /** The Loop's current problem: a config error (with its line) or its last evaluation failure. */
  error: string | null;
  errorLine: number | null;
}

/** Every Loop of the repository's config, valid or broken, with its runtime state. */
export async function listLoops(db: Db, repo: string): Promise<LoopStatus[]> {
  return (await listLoopsOf(db, [repo])).get(repo.toLowerCase()) ?? [];
}

/** listLoops for many repositories in two queries (the Loops page shows them all at once). */
export async function listLoopsOf(db: Db, repos: readonly string[]): Promise<Map<string, LoopStatus[]>> {
  const names = repos.map((r) => r.toLowerCase());
  const [configOf, runtime] = await Promise.all([storedConfigsOf(db, names), loopRuntimesOf(db, names)]);
  const runtimeOf = new Map(runtime.map((r) => [`${r.repo}\u0000${r.loop}`, r]));
  return new Map(names.map((repo) => [repo, loopStatuses(configOf.get(repo) ?? null, (loop) => runtimeOf.get(`${repo}\u0000${loop}`))]));
}

function loopStatuses(config: StoredConfig | null, runtimeOf: (loop: string) => LoopRuntime | undefined): LoopStatus[] {
  return loopNames(config).map((name) => {
    const definition = config?.loops.find((l) => l.name === name) ?? null;
    const row = runtimeOf(name);
    const trigger = definition?.trigger ?? null;
    return {
      name,
      trigger: trigger?.kind ?? null,
      schedule: trigger?.kind === "schedule" ? { cron: trigger.cron, tz: trigger.tz } : null,
      valid: definition !== null,
      paused: row?.paused ?? false,
      pausedBy: row?.paused_by ?? null,
      lastPolledAt: row?.last_polled_at ?? null,
      error: row?.error ?? null,
      errorLine: row?.error_line ?? null,
    };
  });
}

/**
 * Pauses or unpauses a Loop (audited). A paused Loop submits and revokes nothing; its Runs go
 * on. The set of active Loops changes, so the repository's next poll starts from an empty cursor.
 */
export async function setLoopPaused(db: Db, repo: string, loop: string, paused: boolean, actor: string): Promise<LoopStatus> {
  const fullName = repo.toLowerCase();
  const config = await storedConfig(db, fullName);
  if (!loopNames(config).includes(loop)) {
    throw new NotFoundError("loop_not_found", `${fullName} has no Loop "${loop}" in its .github/atelier.yml.`);
  }
  await recordLoopPaused(db, fullName, loop, paused, actor);
  const status = (await listLoops(db, fullName)).find((l) => l.name === loop);
  return status!;
}

/** The Loop names of a config: the valid ones, then the broken ones, in file order where known. */
