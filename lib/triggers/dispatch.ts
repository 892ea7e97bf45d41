import { randomUUID } from "node:crypto";
import { dispatchEventKey } from "../engine/ids";
import { BadInputError, ConflictError, NotFoundError } from "../errors";
import { assertAdmitted, evaluateAdmission } from "../metering/admission";
import { refusalError } from "../metering/refusal";
import { renderOnDemand } from "../loops/evaluate";
import { audit } from "../store/people/audit-log";
import { itemGenerations } from "../store/items/stored-items";
import { recordAndClaim, type EventActor } from "../store/runs/claim";
import { polledRepository } from "../store/github/repository-rows";
import { storedConfig } from "../store/items/repository-configs";
import { transaction } from "../store/kernel/transaction";
import type { TriggerDeps } from "./deps";
import { itemEvent, repositoryContext } from "./evaluate-item";
import { steeringCheck } from "./steering-check";
import { readItem } from "./handle-hint";
import { appBotLogin, continuationsOf } from "./own-items";
import { storeObservations } from "./observe-item";

/** An operator's "run Loop X on #N now". */
export interface DispatchInput {
  repo: string;
  loop: string;
  number: number;
  /** the person asking (their write access checked at the edge), with their role on the repository */
  actor: { login: string; permission: string };
}

export type DispatchOutcome = { tag: "Opened"; runId: string } | { tag: "Queued"; behind: string };

/**
 * Opens a Run of a Loop on an Item because a person asked, whatever the Loop's `if:` says:
 * through the admission gate first (403 suspended, 402 over a monthly quota with reset_at, 429
 * over the concurrency cap or the open rate, with Retry-After), then the claim — which also
 * asks the gate, inside its transaction — so a refusal costs no GitHub call and charges nothing.
 * Each ask is its own Event (audited with its Run); the Loop's approval and cycle budget apply.
 * A Run of the Loop running on the Item, or another person's request open there, queues the ask
 * behind it. The ask is a request (ADR 0073): no poll or Hint revokes it while it waits, and its
 * turn does not ask the `if:` again.
 */
export async function dispatchLoop(deps: TriggerDeps, input: DispatchInput): Promise<DispatchOutcome> {
  const fullName = input.repo.toLowerCase();
  await assertAdmitted(deps.db, { repo: fullName, concurrencyReserve: deps.roster.concurrencyReserve }, ["open", "attempt"]);
  const repo = await polledRepository(deps.db, fullName);
  if (!repo) throw new NotFoundError("repository_not_found", `${fullName} is not a repository Atelier works on.`);
  const loop = (await storedConfig(deps.db, fullName))?.loops.find((l) => l.name === input.loop);
  if (!loop) throw new NotFoundError("loop_not_found", `${fullName} has no valid Loop "${input.loop}" in its .github/atelier.yml.`);
  if (loop.trigger.kind === "schedule") {
    throw new BadInputError("loop_not_dispatchable", `Loop "${loop.name}" is a schedule Loop: it runs on its Ticks, not on an Item.`);
  }
  const item = await readItem(deps, repo, input.number);
  if (!item) throw new NotFoundError("item_not_found", `${fullName}#${input.number} does not exist on GitHub.`);
  const wrongKind = (loop.trigger.kind === "issues" && item.projection.kind !== "issue") || (loop.trigger.kind === "pull_requests" && item.projection.kind !== "pull_request");
  if (wrongKind) {
    throw new BadInputError("loop_wrong_kind", `Loop "${loop.name}" acts on ${loop.trigger.kind.replace("_", " ")}; #${input.number} is ${item.projection.kind === "issue" ? "an issue" : "a pull request"}.`);
  }
  // a same-branch Loop continues only a pull request a Run of this instance opened, on its branch
  const origin = await continuationsOf(deps.db, item)(loop);
  if (origin === null) {
    throw new BadInputError(
      "loop_continues_own_pull_requests",
      `Loop "${loop.name}" continues the pull requests Atelier's Runs opened, on their branch (continue: same-branch); #${input.number} is not one of them.`,
    );
  }
  await storeObservations(deps.db, [item]);
  const generation = (await itemGenerations(deps.db, [item.key])).get(item.key) ?? 0;
  const actor: EventActor = { login: input.actor.login, permission: input.actor.permission, source: "operator" };
  const prompt = renderOnDemand(loop, item.projection, repositoryContext(repo), { login: actor.login, permission: actor.permission, authorAssociation: null });
  if (typeof prompt !== "string") throw new BadInputError(prompt.token, prompt.message);

  const steering = await steeringCheck(deps, repo, await appBotLogin(deps.github))(loop.prompt, item.projection, null);
  const who = { facts: { actor, authorAssociation: null }, depth: 0, steering };
  const event = { ...itemEvent(repo, loop, item, generation, prompt, who, null, origin?.branch ?? null), id: dispatchEventKey(loop.name, fullName, input.number, randomUUID()) };
  const result = await recordAndClaim(deps.db, event, deps.admission);
  const outcome = await outcomeOf(deps, fullName, result);
  await transaction(deps.db, (sql) =>
    audit(sql, { actor: actor.login, action: "dispatch_loop", repo: fullName, runId: outcome.tag === "Opened" ? outcome.runId : null, detail: { loop: loop.name, number: input.number, outcome: outcome.tag } }),
  );
  if (result.tag === "Claimed" && result.opened) await deps.workQueue.moveRun(result.runId, { receivedAt: new Date() });
  return outcome;
}

async function outcomeOf(deps: TriggerDeps, repo: string, result: Awaited<ReturnType<typeof recordAndClaim>>): Promise<DispatchOutcome> {
  switch (result.tag) {
    case "Claimed":
      return { tag: "Opened", runId: result.runId };
    case "Queued":
      return { tag: "Queued", behind: result.behind };
    case "Blocked": {
      if (result.reason === "cycle_budget_exhausted") {
        throw new ConflictError(result.reason, "The Run was not opened: cycle budget exhausted (an operator can reset the Item's cycle budget on the Board).");
      }
      // the gate said no inside the claim (a limit reached meanwhile): its refusal, with its numbers
      const refusal = await evaluateAdmission(deps.db, { repo }, ["open"]);
      if (refusal) throw refusalError(refusal);
      throw new ConflictError("admission_changed", "The Run was not opened: a limit refused it inside the claim and no longer does; ask again.");
    }
    case "Ignored":
      throw new ConflictError(result.reason, "The Run was not opened: the Item's cycle generation changed meanwhile; ask again.");
  }
}
