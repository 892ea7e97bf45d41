import { tickEventKey, tickItemKey } from "../engine/ids";
import type { LoopDefinition } from "../loops/config-schema";
import { evaluateTick } from "../loops/evaluate";
import { latestTickAtOrBefore } from "../loops/schedule";
import { pausedLoops, recordLoopEvaluations } from "../store/items/loop-runtimes";
import { recordAndClaim, type ClaimResult, type EventInput } from "../store/runs/claim";
import { polledRepositories, polledRepository, type RegisteredRepository } from "../store/github/repository-rows";
import { storedConfig } from "../store/items/repository-configs";
import { approvalFor } from "./actor";
import { reviewReasonFor } from "../loops/steering";
import type { TriggerDeps } from "./deps";
import { repositoryContext } from "./evaluate-item";

/** A schedule Loop of a repository's config: one job scheduler each. */
export interface ScheduleLoopRef {
  /** the repository whose config declares the Loop */
  repo: string;
  loop: string;
  cron: string;
  tz: string;
}

export type TickOutcome =
  | {
      status: "fired";
      repo: string;
      loop: string;
      scheduledAt: Date;
      /** one per selected repository */
      targets: { repo: string; result: ClaimResult | { tag: "Skipped"; reason: string } }[];
      opened: string[];
    }
  | { status: "skipped"; repo: string; loop: string; reason: "no_such_loop" | "paused" | "no_tick" | "not_polled" };

/** Every schedule Loop of every polled repository's stored config. */
export async function scheduleLoops(deps: Pick<TriggerDeps, "db">): Promise<ScheduleLoopRef[]> {
  const out: ScheduleLoopRef[] = [];
  for (const repo of await polledRepositories(deps.db)) {
    const config = await storedConfig(deps.db, repo.fullName);
    for (const loop of config?.loops ?? []) {
      if (loop.trigger.kind === "schedule") out.push({ repo: repo.fullName, loop: loop.name, cron: loop.trigger.cron, tz: loop.trigger.tz });
    }
  }
  return out;
}

/**
 * A schedule Loop wakes: takes the latest Tick at or before `now`, evaluates `if:` with the
 * Tick as the Item, and submits one Event per selected repository, keyed by (Loop, repository,
 * scheduledAt) — so a wake that comes twice, or after a restart, fires each Tick once. Schedule
 * Loops have no cycle budget.
 */
export async function fireSchedule(deps: TriggerDeps, repo: string, loopName: string, now: Date): Promise<TickOutcome> {
  const fullName = repo.toLowerCase();
  const skipped = (reason: Extract<TickOutcome, { status: "skipped" }>["reason"]): TickOutcome => ({ status: "skipped", repo: fullName, loop: loopName, reason });
  const declaring = await polledRepository(deps.db, fullName);
  if (!declaring) return skipped("not_polled");
  const loop = (await storedConfig(deps.db, fullName))?.loops.find((l) => l.name === loopName);
  if (!loop || loop.trigger.kind !== "schedule") return skipped("no_such_loop");
  if ((await pausedLoops(deps.db, fullName)).has(loopName)) return skipped("paused");
  const scheduledAt = latestTickAtOrBefore(loop.trigger.cron, loop.trigger.tz, now);
  if (!scheduledAt) return skipped("no_tick");

  const targets: Extract<TickOutcome, { status: "fired" }>["targets"] = [];
  const opened: string[] = [];
  const failures = new Map<string, string>();
  for (const target of loop.trigger.repositories ?? [fullName]) {
    const targetRepo = await polledRepository(deps.db, target);
    if (!targetRepo) {
      targets.push({ repo: target, result: { tag: "Skipped", reason: "repository_not_polled" } });
      failures.set(loop.name, `Loop "${loop.name}" selects ${target}, which the App is not installed on (or which is suspended): install the App there or remove it from repositories:.`);
      continue;
    }
    if (targetRepo.installationId !== declaring.installationId) {
      // the tenant boundary, again at the Tick: a config stored before the check, or an installation that changed
      targets.push({ repo: targetRepo.fullName, result: { tag: "Skipped", reason: "other_installation" } });
      failures.set(loop.name, `Loop "${loop.name}" selects ${targetRepo.fullName}, which belongs to another installation than ${fullName}: a Loop acts only on repositories of its own installation; nothing was opened there.`);
      continue;
    }
    const decision = evaluateTick(loop, { scheduledAt }, repositoryContext(targetRepo));
    if (decision.outcome === "skip") {
      targets.push({ repo: target, result: { tag: "Skipped", reason: "condition_false" } });
      continue;
    }
    if (decision.outcome === "error") {
      failures.set(loop.name, decision.message);
      targets.push({ repo: target, result: { tag: "Skipped", reason: decision.token } });
      continue;
    }
    const result = await recordAndClaim(deps.db, tickEvent(loop, targetRepo, scheduledAt, decision.prompt, fullName), deps.admission);
    targets.push({ repo: targetRepo.fullName, result });
    if (result.tag === "Claimed" && result.opened) {
      opened.push(result.runId);
      await deps.workQueue.moveRun(result.runId, { receivedAt: new Date() });
    }
  }
  await recordLoopEvaluations(deps.db, fullName, [loop], failures, new Date(deps.clock.now()));
  return { status: "fired", repo: fullName, loop: loopName, scheduledAt, targets, opened };
}

/** After a restart: each schedule Loop fires its latest missed Tick (the ledger drops repeats). */
export async function fireMissedTicks(deps: TriggerDeps, now: Date = new Date(deps.clock.now())): Promise<TickOutcome[]> {
  const out: TickOutcome[] = [];
  for (const ref of await scheduleLoops(deps)) out.push(await fireSchedule(deps, ref.repo, ref.loop, now));
  return out;
}

/**
 * The Event of a schedule Loop's Tick on one repository; `declaredIn`: the repository whose
 * config declares the Loop. A Tick has no actor (a writer of `declaredIn` wrote the schedule);
 * a public repository still asks for approval unless the Loop says `approval:`.
 */
export function tickEvent(
  loop: LoopDefinition,
  target: Pick<RegisteredRepository, "fullName" | "private">,
  scheduledAt: Date,
  prompt: string,
  declaredIn: string = target.fullName,
): EventInput {
  const repo = target.fullName;
  const { approvalRequired, approvalReason } = approvalFor(loop, target, null);
  return {
    id: tickEventKey(loop.name, repo, scheduledAt),
    kind: "tick",
    loop: loop.name,
    repo: repo.toLowerCase(),
    itemKey: tickItemKey(repo),
    number: null,
    contentHash: null,
    generation: 0,
    submission: {
      prompt,
      agent: loop.agent,
      ...(loop.model ? { model: loop.model } : {}),
      approvalRequired,
      approvalReason,
      maxCycles: null,
      declaredIn: declaredIn.toLowerCase(),
      actor: null,
      ...(loop.environment ? { environment: loop.environment } : {}),
      review: reviewReasonFor(loop, null),
    },
  };
}
