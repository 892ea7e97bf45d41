import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHintWorker } from "../../jobs/processors/hint";
import { createMirrorWorker, type MirrorWorker } from "../../jobs/processors/mirror";
import { bullConnection } from "../../jobs/queues";
import { intentOf } from "../../lib/engine/claim-decision";
import { itemKey } from "../../lib/engine/ids";
import { runCommentMarker } from "../../lib/mirror/run-comment-view";
import { appRunnerGitHub } from "../../lib/runner/app-github";
import { approve } from "../../lib/store/runs/approvals";
import { intentSql } from "../../lib/store/runs/event-intent";
import { answerBudgetAsk } from "../../lib/triggers/budget-reset";
import { loopConditionHolds } from "../../lib/triggers/condition-holds";
import { dispatchLoop } from "../../lib/triggers/dispatch";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { hintsSettled, installRepository, startFixture, startWebhookEndpoint, type Fixture } from "../github/support/fixture";
import { attemptsOf, startRunner, waitFor, type RunnerUnderTest } from "../runner/support/runner-fixture";

/**
 * A person's request is its own work (ADR 0073), on the whole stack: the simulator's webhooks
 * through the receiver and a Hint worker, the runner with the demo agent, the mirror worker
 * writing the tracking comment (whose own webhook comes back as a Hint), and the Loop's `if:`
 * asked again at each turn as the worker process asks it.
 */

const SLUG = "atelier-sandbox";
const CONFIG = `loops:
  answer:
    on: comments
    agent: demo
    approval: required
    prompt: "\${{ comment.author }} asks on #\${{ item.number }}: \${{ comment.body }}"
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent')
    agent: demo
    approval: required
    prompt: "Implement #\${{ item.number }}"
`;
const BUDGET_CONFIG = `loops:
  answer:
    on: comments
    agent: demo
    max_cycles: 1
    prompt: "\${{ comment.author }} asks on #\${{ item.number }}: \${{ comment.body }}"
`;

let fx: Fixture;
let endpoint: { close(): Promise<void> };
let hints: Worker;
let mirror: MirrorWorker;
let runner: RunnerUnderTest;
let root: string;
let repo: string;
let budgeted: string;

beforeAll(async () => {
  fx = await startFixture();
  endpoint = await startWebhookEndpoint(fx);
  hints = createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
  await hints.waitUntilReady();
  mirror = await createMirrorWorker(bullConnection(), { db: fx.db, github: async (id) => fx.github.installationOctokit(id), publicUrl: "http://atelier.test" }, { prefix: fx.prefix, sweepEveryMs: 0 });
  root = mkdtempSync(join(tmpdir(), "atelier-requests-"));
  runner = await startRunner({
    db: fx.db,
    prefix: fx.prefix,
    github: appRunnerGitHub(fx.github, fx.db),
    workspaceRoot: root,
    workerId: "requests",
    leaseTtlMs: 10_000,
    recheckCondition: (subject) => loopConditionHolds(fx.deps, subject),
  });
  ({ fullName: repo } = await installRepository(fx, { owner: "talk", name: "requests", config: CONFIG }));
  ({ fullName: budgeted } = await installRepository(fx, { owner: "talk", name: "budgeted", config: BUDGET_CONFIG }));
  fx.sim.createUser({ login: "writer" });
  fx.sim.createUser({ login: "stranger" });
  for (const r of [repo, budgeted]) {
    fx.sim.setUserPermission({ repo: r, login: "writer", permission: "write" });
    await pollRepository(fx.deps, r); // reads the config
  }
}, 120_000);

afterAll(async () => {
  await runner?.close();
  await mirror?.close();
  await hints?.close();
  await endpoint?.close();
  await fx?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

interface RunFacts {
  id: string;
  state: string;
  cancel_reason: string | null;
  prompt: string;
  received_at: Date;
  actor: { login: string; source: string } | null;
}

async function runsOn(r: string, loop: string, number: number): Promise<RunFacts[]> {
  const { rows } = await fx.db.pool.query<RunFacts>(
    `SELECT r.id, r.state::text AS state, r.cancel_reason, r.prompt, r.received_at, e.submission->'actor' AS actor
       FROM runs r JOIN events e ON e.id = r.event_id WHERE r.repo = $1 AND r.loop = $2 AND r.number = $3 ORDER BY r.created_at, r.id`,
    [r, loop, number],
  );
  return rows;
}

async function eventsOn(r: string, number: number): Promise<{ status: string; reason: string | null; body: string }[]> {
  const { rows } = await fx.db.pool.query(
    `SELECT status::text AS status, reason, submission->>'prompt' AS body FROM events WHERE repo = $1 AND number = $2 AND kind = 'item' ORDER BY received_at, id`,
    [r, number],
  );
  return rows;
}

/** Waits for the Runs of the Loop on the Item to be `states`, in order. */
async function runsReach(r: string, loop: string, number: number, states: string[]): Promise<RunFacts[]> {
  return waitFor(`${r}#${number} ${loop} Runs ${states.join(", ")}`, async () => {
    const runs = await runsOn(r, loop, number);
    return runs.length === states.length && runs.every((run, i) => run.state === states[i]) ? runs : null;
  }, 120_000, 100);
}

/** An operator approves the Run and its job is enqueued (lib/runner/operator.ts approveRun). */
async function approveRun(run: RunFacts): Promise<void> {
  await approve(fx.db, run.id, "writer");
  await fx.workQueue.moveRun(run.id, { receivedAt: run.received_at });
}

const settled = () => hintsSettled(fx);

describe("two people's comments on one issue are two requests", () => {
  it("a stranger's comment waits behind the writer's unstarted Run, its edit replaces only its own ask, and each runs in turn", async () => {
    const issue = fx.sim.createIssue({ login: "writer", repo, title: "Footer" });
    fx.sim.comment({ login: "writer", repo, number: issue.number, body: `@${SLUG} fix the footer` });
    const [writers] = await runsReach(repo, "answer", issue.number, ["Waiting"]);

    const stranger = fx.sim.comment({ login: "stranger", repo, number: issue.number, body: `@${SLUG} hi` });
    await settled();
    expect(await runsOn(repo, "answer", issue.number)).toEqual([writers]); // not superseded
    fx.sim.editComment({ login: "stranger", repo, id: Number(stranger.id), body: `@${SLUG} hi, and make it blue` });
    await settled();
    expect(await runsOn(repo, "answer", issue.number)).toEqual([writers]);
    expect((await eventsOn(repo, issue.number)).map((e) => [e.status, e.reason])).toEqual([
      ["Claimed", null],
      ["Ignored", "superseded_by_newer"], // the stranger's first version, by its edit
      ["Queued", null],
    ]);

    // the writer's Run is approved and runs; the stranger's ask then opens its own Run, which waits for a writer
    await approveRun(writers!);
    const [done, next] = await runsReach(repo, "answer", issue.number, ["Succeeded", "Waiting"]);
    expect(done!.state, JSON.stringify(await attemptsOf(fx.db, done!.id))).toBe("Succeeded");
    expect(next).toMatchObject({ actor: { login: "stranger", source: "comment" }, prompt: `stranger asks on #${issue.number}: @${SLUG} hi, and make it blue` });
  });
});

describe('"Run now" is the operator\'s decision', () => {
  it("a dispatched Run on an Item whose if: is false survives the tracking comment's Hint and runs; a second ask queues and is not dropped at its turn", async () => {
    const issue = fx.sim.createIssue({ login: "writer", repo, title: "No label", body: "run it anyway" });
    const actor = { login: "writer", permission: "write" };
    const first = await dispatchLoop(fx.deps, { repo, loop: "start-dev", number: issue.number, actor });
    expect(first.tag).toBe("Opened");
    const [opened] = await runsReach(repo, "start-dev", issue.number, ["Waiting"]);
    // a second "Run now" while the first waits: its own ask, queued behind it (202), not in its place
    expect(await dispatchLoop(fx.deps, { repo, loop: "start-dev", number: issue.number, actor })).toEqual({ tag: "Queued", behind: opened!.id });

    // the mirror's tracking comment comes back as an issue_comment webhook: a Hint that reads the Item, whose if: is false
    await waitFor("the tracking comment's webhook", async () =>
      fx.sim.deliveries({ event: "issue_comment" }).some((d) => String((d.payload.comment as { body: string }).body).includes(runCommentMarker(opened!.id))),
    30_000, 50);
    await settled();
    expect(await runsOn(repo, "start-dev", issue.number)).toEqual([opened]);

    await approveRun(opened!);
    const [done, queued] = await runsReach(repo, "start-dev", issue.number, ["Succeeded", "Waiting"]);
    expect(done!.state, JSON.stringify(await attemptsOf(fx.db, done!.id))).toBe("Succeeded");
    expect(queued).toMatchObject({ actor: { login: "writer", source: "operator" } });
  });
});

describe("a cycle budget reset", () => {
  it("runs the comment ask the budget blocked, at once", async () => {
    const issue = fx.sim.createIssue({ login: "writer", repo: budgeted, title: "Menu" });
    fx.sim.comment({ login: "writer", repo: budgeted, number: issue.number, body: `@${SLUG} fix the menu` });
    await runsReach(budgeted, "answer", issue.number, ["Succeeded"]);
    fx.sim.comment({ login: "writer", repo: budgeted, number: issue.number, body: `@${SLUG} and the logo` });
    await settled();
    expect((await eventsOn(budgeted, issue.number)).map((e) => [e.status, e.reason])).toEqual([
      ["Claimed", null],
      ["Blocked", "cycle_budget_exhausted"],
    ]);

    await answerBudgetAsk(fx.deps, itemKey(budgeted, issue.number), "writer");
    const [, again] = await runsReach(budgeted, "answer", issue.number, ["Succeeded", "Succeeded"]);
    expect(again!.prompt).toBe(`writer asks on #${issue.number}: @${SLUG} and the logo`);
    const { rows } = await fx.db.pool.query(`SELECT next_poll_at <= now() AS due FROM repositories WHERE full_name = $1`, [budgeted]);
    expect(rows[0].due).toBe(true); // the next poll reads every Item at the new generation
  });
});

describe("an Event's intent", () => {
  it("is the same in TypeScript and in SQL", async () => {
    const submissions = [
      {},
      { actor: null },
      { actor: { source: "webhook" } },
      { actor: { source: "operator" } },
      { actor: { source: "comment" }, comment: { kind: "issue_comment", id: 12 } },
      { actor: { source: "operator" }, comment: null },
    ];
    for (const s of submissions) {
      const { rows } = await fx.db.pool.query(`SELECT ${intentSql("$1::jsonb")} AS intent`, [JSON.stringify(s)]);
      expect(rows[0].intent, JSON.stringify(s)).toBe(intentOf(s as Parameters<typeof intentOf>[0]));
    }
  });
});
