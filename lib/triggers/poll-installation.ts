import { describeError } from "../github/rate-limit-errors";
import { marksAgree, probeRepositories, pullsWithThreads, repositoryIdHolding, type RepositoryProbe } from "../github/repository-probe";
import { pausedLoops } from "../store/items/loop-runtimes";
import { readPollState, type PollState } from "../store/items/poll-cursors";
import { scheduleNextPoll, takeDueRepositories, type DueRepository } from "../store/items/poll-schedule";
import type { StoredConfig } from "../loops/stored-config";
import { storedConfigsOf } from "../store/items/repository-configs";
import { activeLoopSignature, startsFromEmptyCursor } from "./cursor";
import type { TriggerDeps } from "./deps";
import { activeItemLoops } from "./evaluate-item";
import { mapSettledLimit } from "./parallel";
import { retireRepository } from "../store/github/repository-rows";
import { transaction } from "../store/kernel/transaction";
import { nextInterval } from "./poll-interval";
import { pollRepository, type PollOutcome } from "./poll-repository";
import { configFilesOf } from "./repository-config";

/**
 * One tick of adaptive polling (ADR 0020): the repositories due now, per installation, are
 * probed together (one GraphQL query for up to PROBE_BATCH of them); a quiet one costs nothing
 * more and its interval grows, the others get a poll cycle (told what the probe saw) and the
 * shortest interval. A probe that fails polls its repositories the old way, each after GitHub
 * says which id holds its name (ADR 0091).
 */
export async function pollDueRepositories(deps: TriggerDeps): Promise<PollOutcome[]> {
  const now = deps.clock.now();
  const byInstallation = new Map<number, DueRepository[]>();
  // taken for as long as the shortest interval: scheduled again when their poll ends
  for (const repo of await takeDueRepositories(deps.db, new Date(now), new Date(now + deps.pollIntervals.minSeconds * 1000))) {
    byInstallation.set(repo.installationId, [...(byInstallation.get(repo.installationId) ?? []), repo]);
  }
  const outcomes: PollOutcome[] = [];
  for (const [installationId, repos] of byInstallation) {
    if (deps.github.nextAllowedAt(installationId)) continue; // the rate limit refused: due again after the shortest interval
    const [configs, states] = await Promise.all([storedConfigsOf(deps.db, repos.map((r) => r.fullName)), Promise.all(repos.map((r) => readPollState(deps.db, r.fullName)))]);
    const targets = repos.map((r, i) => ({
      fullName: r.fullName,
      configFiles: configFilesOf(r.fullName, configs.get(r.fullName) ?? null),
      threadPulls: ifReadsThreads(configs.get(r.fullName) ?? null) ? pullsWithThreads(states[i]!.cursor.pullMarks) : [],
    }));
    const probes = await probeRepositories(deps.github, installationId, targets).catch((err: unknown) => {
      deps.log.warn({ installation_id: installationId, err: describeError(err) }, "change probe failed; polling each repository");
      return new Map();
    });
    const settled = await mapSettledLimit(repos, deps.repositoryConcurrency, async (repo, i) => {
      const probed = probes.get(repo.fullName);
      const probe: RepositoryProbe | null = probed && "probe" in probed ? probed.probe : null;
      const holder = probe ? probe.repositoryId : await repositoryIdHolding(deps.github, installationId, repo.fullName);
      if (await retiredWhenNameTaken(deps, repo, holder)) return { status: "skipped", repo: repo.fullName, reason: "name_taken", nextAllowedAt: null } satisfies PollOutcome;
      const quiet = probe !== null && (await isQuiet(deps, repo, states[i]!, configs.get(repo.fullName) ?? null, probe));
      const outcome: PollOutcome = quiet ? { status: "quiet", repo: repo.fullName } : await pollRepository(deps, repo.fullName, probe ?? undefined);
      const changed = outcome.status === "polled" && (outcome.fresh || outcome.observed > 0);
      const interval = nextInterval(repo.pollIntervalS, changed, deps.pollIntervals);
      if (outcome.status !== "skipped") await scheduleNextPoll(deps.db, repo.fullName, interval, now, quiet ? new Date() : null);
      return outcome;
    });
    settled.forEach((s, i) =>
      outcomes.push(s.status === "fulfilled" ? s.value : { status: "failed", repo: repos[i]!.fullName, token: "poll_failed", error: describeError(s.reason), nextAllowedAt: null }),
    );
  }
  return outcomes;
}

/**
 * The rename window (ADR 0070): GitHub follows a renamed or transferred repository's old name to
 * it until another repository takes that name. When the probe (or, without one, a REST read of
 * the name) finds the name held by another id (`holder`; null when GitHub did not say),
 * the repository Atelier registered under it is no longer there: it is retired, as when another
 * id registers under its name, and nothing of the newcomer is read into its rows; a delivery or
 * the reconcile registers its id under its new name (its rows come back with it), and the
 * newcomer when it is installed. True when it was retired.
 */
async function retiredWhenNameTaken(deps: TriggerDeps, repo: DueRepository, holder: number | null): Promise<boolean> {
  if (holder === null || String(holder) === String(repo.id)) return false;
  await transaction(deps.db, (sql) => retireRepository(sql, repo.id));
  deps.log.warn({ installation_id: repo.installationId, repo: repo.fullName, id: repo.id, holder }, "another repository holds this name on GitHub now: retired");
  await deps.workQueue.syncSchedulers();
  return true;
}

/**
 * Whether the probe shows a repository with nothing to read: its config files are those it was
 * read from, its cursor is settled and written for the active Loops, no Item was updated past
 * it, and its open pull requests carry the marks of the last cycle. (Its declared labels are
 * checked by the cycles that do read it.)
 */
async function isQuiet(deps: TriggerDeps, repo: DueRepository, state: PollState, config: StoredConfig | null, probe: RepositoryProbe): Promise<boolean> {
  const paused = await pausedLoops(deps.db, repo.fullName);
  if (!config || config.probeMark !== probe.configMark) return false;
  return cursorCovers(state, probe) && !startsFromEmptyCursor(state, activeLoopSignature(activeItemLoops(config.loops, paused)));
}

/** The cursor already holds what the probe saw: settled, no newer update, the same open pull requests and marks. */
function cursorCovers(state: PollState, probe: RepositoryProbe): boolean {
  const { since, settled, pullMarks } = state.cursor;
  if (!settled || probe.pullMarks === null) return false;
  if (probe.newestUpdate !== null && (since === null || probe.newestUpdate.getTime() > since.getTime())) return false;
  const open = Object.keys(probe.pullMarks);
  return open.length === Object.keys(pullMarks).length && open.every((n) => marksAgree(probe.pullMarks![n], pullMarks[n]));
}

/**
 * Whether a Loop's `if:` reads the review threads: only then does the probe ask the resolution
 * of the threads of its open pull requests (one request of its cost each, ADR 0093); the other
 * Loops see them as the pull request's last read had them.
 */
function ifReadsThreads(config: StoredConfig | null): boolean {
  return config?.loops.some((l) => l.if?.includes("review_threads")) ?? false;
}
