import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_BOARD_LANES } from "../../lib/config/roster";
import { loadBoard } from "../../lib/dashboard/board";
import { laneOf, laneRules } from "../../lib/dashboard/lanes";
import { loadNeedsYou } from "../../lib/dashboard/needs-you";
import { encodeStep } from "../../lib/executor/adapters/step-entry";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { seedItem, seedRepo, seedRun, uniqueInstallationId } from "./support/seed";

const tag = randomBytes(3).toString("hex");
const REPO = `board-${tag}/app`;
let db: Db;
const LABELS = ["ready-for-agent", "Agent-Working", "in-review", "bug", "docs"];

beforeAll(async () => {
  db = testDb(4);
  await seedRepo(db, REPO, uniqueInstallationId());
});
afterAll(() => db.close());

it("puts each Item in the lane the pure rule says, with its open Run before older closed ones", async () => {
  const items: { number: number; state: string; labels: string[] }[] = [];
  for (let n = 1; n <= 40; n++) {
    const labels = LABELS.filter((_, i) => (n >> i) & 1);
    const state = n % 7 === 0 ? "closed" : "open";
    items.push({ number: n, state, labels });
    await seedItem(db, REPO, n, { labels, state, updatedAt: new Date(Date.now() - n * 1000) });
  }
  // Item 3: an old Succeeded Run, then an open Waiting one; the card shows the open one
  await seedRun(db, { repo: REPO, number: 3, state: "Succeeded", receivedAt: new Date(Date.now() - 60_000), pullRequestNumber: 11 });
  const open = await seedRun(db, { repo: REPO, number: 3, state: "Waiting" });
  await seedRun(db, { repo: REPO, number: 5, state: "Failed", loop: "review", attempts: [{ state: "Failed", failureKind: "AgentFailure" }] });

  const board = await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES });
  const rules = laneRules(DEFAULT_BOARD_LANES);
  for (const it of items) {
    const lane = board.lanes.findIndex((l) => l.cards.some((c) => c.number === it.number));
    expect(lane, `#${it.number} ${it.state} [${it.labels}]`).toBe(laneOf(rules, it));
  }
  const card3 = board.lanes.flatMap((l) => l.cards).find((c) => c.number === 3)!;
  expect(card3.run).toMatchObject({ id: open, state: "Waiting", waitsFor: "an operator's approval" });
  // newest first within a lane
  for (const l of board.lanes) expect(l.cards.map((c) => c.updatedAt)).toEqual([...l.cards.map((c) => c.updatedAt)].sort().reverse());

  const filtered = await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES, loop: "review" });
  const cards = filtered.lanes.flatMap((l) => l.cards);
  expect(cards.map((c) => c.number)).toEqual([5]);
  expect(cards[0]!.run).toMatchObject({ loop: "review", state: "Failed", failureKind: "AgentFailure" });

  const limited = await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES, perLane: 2 });
  for (const l of limited.lanes) {
    expect(l.cards.length).toBeLessThanOrEqual(2);
    expect(l.total).toBe(board.lanes.find((b) => b.name === l.name)!.total);
  }
  expect(await loadBoard(db, { repos: [], lanes: DEFAULT_BOARD_LANES })).toMatchObject({ lanes: DEFAULT_BOARD_LANES.map(() => ({ total: 0, cards: [] })) });
});

it("a running card says since when its Attempt runs and its last step; other cards neither", async () => {
  await seedItem(db, REPO, 101, { labels: ["agent-working"], state: "open" });
  const running = await seedRun(db, { repo: REPO, number: 101, state: "Running", attempts: [{ state: "Running" }] });
  const step = encodeStep({ type: "tool_call", id: "t1", name: "Bash", input: { command: "npm test" }, inputCutBytes: 0 });
  await db.pool.query(`INSERT INTO transcript_entries (run_id, attempt_id, stream, text) VALUES ($1, $2, 'stdout', 'cloning'), ($1, $2, $3, $4)`, [
    running,
    `${running}/agent/1`,
    step.stream,
    step.text,
  ]);
  await seedItem(db, REPO, 102, { labels: [], state: "open" });
  await seedRun(db, { repo: REPO, number: 102, state: "Succeeded", attempts: [{ state: "Succeeded" }] });

  const cards = (await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES })).lanes.flatMap((l) => l.cards);
  const card = cards.find((c) => c.number === 101)!;
  expect(card.run).toMatchObject({ state: "Running", lastStep: "Bash: npm test" });
  expect(Date.now() - Date.parse(card.run!.runningSince!)).toBeLessThan(10 * 60_000);
  expect(cards.find((c) => c.number === 102)!.run).toMatchObject({ state: "Succeeded", runningSince: null, lastStep: null });
});

it("lanes follow the work: a running Run → In progress, its open pull request → In review, merged or closed → Done, whatever the labels", async () => {
  const rules = laneRules(DEFAULT_BOARD_LANES);
  await seedItem(db, REPO, 201, { labels: ["ready-for-agent"], state: "open" });
  await seedRun(db, { repo: REPO, number: 201, state: "Running", attempts: [{ state: "Running" }] });
  await seedItem(db, REPO, 202, { labels: ["ready-for-agent"], state: "open" });
  await seedRun(db, { repo: REPO, number: 202, state: "Succeeded", pullRequestNumber: 212 });
  await seedItem(db, REPO, 212, { labels: [], state: "open" });
  await seedItem(db, REPO, 203, { labels: ["ready-for-agent"], state: "open" });
  await seedRun(db, { repo: REPO, number: 203, state: "Succeeded", pullRequestNumber: 213 });
  await seedItem(db, REPO, 213, { labels: [], state: "closed" });

  const board = await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES });
  const laneName = (n: number) => board.lanes.find((l) => l.cards.some((c) => c.number === n))?.name;
  expect([201, 202, 203].map(laneName)).toEqual(["In progress", "In review", "Done"]);
  expect(board.lanes.flatMap((l) => l.cards).find((c) => c.number === 202)!.run).toMatchObject({ pullRequestNumber: 212 });
  // the pure rule says the same
  const ready = { state: "open", labels: ["ready-for-agent"] };
  expect(DEFAULT_BOARD_LANES[laneOf(rules, ready, { runRunning: true, pullRequestState: null })!]!.name).toBe("In progress");
  expect(DEFAULT_BOARD_LANES[laneOf(rules, ready, { runRunning: false, pullRequestState: "open" })!]!.name).toBe("In review");
  expect(DEFAULT_BOARD_LANES[laneOf(rules, ready, { runRunning: false, pullRequestState: "closed" })!]!.name).toBe("Done");
  // lanes that follow nothing: the labels alone, as before
  const labelsOnly = DEFAULT_BOARD_LANES.map(({ follows: _follows, ...lane }) => lane);
  const plain = await loadBoard(db, { repos: [REPO], lanes: labelsOnly });
  expect([201, 202].map((n) => plain.lanes.find((l) => l.cards.some((c) => c.number === n))?.name)).toEqual(["Ready for agent", "Ready for agent"]);
});

it("a pull request a Run opened is on its Item's card, with its state, and not a card of its own", async () => {
  await seedItem(db, REPO, 301, { labels: ["ready-for-agent"], state: "open" });
  await seedRun(db, { repo: REPO, number: 301, state: "Succeeded", pullRequestNumber: 311 });
  await seedItem(db, REPO, 311, { kind: "pull_request", labels: [], state: "open", title: "The agent's PR" });
  await seedItem(db, REPO, 302, { labels: ["ready-for-agent"], state: "open" });
  await seedRun(db, { repo: REPO, number: 302, state: "Succeeded", pullRequestNumber: 312 });
  await seedItem(db, REPO, 312, { kind: "pull_request", labels: [], state: "merged" });
  // a pull request a person opened, no Run's: a card of its own
  await seedItem(db, REPO, 313, { kind: "pull_request", labels: [], state: "open" });

  const board = await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES });
  const cards = board.lanes.flatMap((l) => l.cards);
  const laneName = (n: number) => board.lanes.find((l) => l.cards.some((c) => c.number === n))?.name;
  expect(cards.filter((c) => c.number === 311 || c.number === 312)).toEqual([]);
  expect(cards.find((c) => c.number === 301)!.run).toMatchObject({ pullRequestNumber: 311, pullRequestState: "open" });
  expect(cards.find((c) => c.number === 302)!.run).toMatchObject({ pullRequestNumber: 312, pullRequestState: "merged" });
  expect([301, 302, 313].map(laneName)).toEqual(["In review", "Done", "Backlog"]);
  // a Run whose pull request Atelier has not read yet: the number, no state
  await seedItem(db, REPO, 303, { labels: [], state: "open" });
  await seedRun(db, { repo: REPO, number: 303, state: "Succeeded", pullRequestNumber: 399 });
  const again = (await loadBoard(db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES })).lanes.flatMap((l) => l.cards);
  expect(again.find((c) => c.number === 303)!.run).toMatchObject({ pullRequestNumber: 399, pullRequestState: null });
});

it("Needs you gathers approvals, failures, budget asks, config, Loop and poll errors, newest first", async () => {
  const repo = `needs-${tag}/app`;
  await seedRepo(db, repo, uniqueInstallationId(), { configError: "line 3: loops.x: unknown key", pollError: "GitHub answered 502" });
  await seedItem(db, repo, 1);
  await seedItem(db, repo, 2);
  await seedItem(db, repo, 3);
  const waiting = await seedRun(db, { repo, number: 1, state: "Waiting" });
  const failed = await seedRun(db, { repo, number: 2, state: "Failed", attempts: [{ state: "Failed", failureKind: "AgentFailure", failureCategory: "agent_exit", failureMessage: "exit 1" }] });
  await db.pool.query(`INSERT INTO cycle_budgets (item_key, repo, ask, asked_at) VALUES ($1, $2, '{"askId":"a","loop":"start-dev","maxCycles":3}', now())`, [
    JSON.stringify(["github", repo, 3]),
    repo,
  ]);
  await db.pool.query(`INSERT INTO loop_runtime (repo, loop, error, error_line, updated_at) VALUES ($1, 'nightly', 'bad cron', 9, now())`, [repo]);
  const needs = await loadNeedsYou(db, [repo]);
  expect(needs.counts).toEqual({ approval: 1, review: 0, failure: 1, engine_failure: 0, budget_ask: 1, config_error: 1, loop_error: 1, poll_error: 1, quota: 0 });
  expect(needs.total).toBe(6);
  expect(needs.needs.find((n) => n.kind === "approval")).toMatchObject({ runId: waiting, action: { kind: "approve", runId: waiting } });
  expect(needs.needs.find((n) => n.kind === "failure")).toMatchObject({ runId: failed, detail: "AgentFailure · agent_exit: exit 1" });
  expect(needs.needs.find((n) => n.kind === "loop_error")?.detail).toBe("line 9: bad cron");
  expect(needs.needs.map((n) => n.at)).toEqual([...needs.needs.map((n) => n.at)].sort().reverse());
});
