import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJobId, QUEUE_NAMES } from "../../jobs/queues";
import { itemKey } from "../../lib/engine/ids";
import { ItemSliceReader } from "../../lib/github/graphql-items";
import { beginAttempt } from "../support/attempts";
import { handleHint } from "../../lib/triggers/handle-hint";
import { pollRepositories, pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, runsOf, startFixture, type Fixture } from "../github/support/fixture";
import { openPull } from "../github/support/seed";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const LABEL = "ready-for-agent";

async function cursor(repo: string) {
  const { rows } = await fx.db.pool.query(
    `SELECT cursor_since, cursor_etag, cursor_open_pulls, cursor_loops, poll_error FROM repositories WHERE full_name = $1`,
    [repo],
  );
  return rows[0];
}

describe("pollRepository", () => {
  it("opens exactly one Run when an issue gets the label, and none for the same content again", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "poll-a", name: "app" });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Add dark mode", body: "Please." });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled", fresh: true, opened: [], labelsCreated: [LABEL] });
    expect(await runsOf(fx.db, fullName)).toEqual([]);

    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: [LABEL] });
    const polled = await pollRepository(fx.deps, fullName);
    expect(polled).toMatchObject({ status: "polled", fresh: false, opened: [expect.any(String)] });
    const runs = await runsOf(fx.db, fullName);
    expect(runs).toEqual([{ id: expect.any(String), loop: "start-dev", number: issue.number, state: "Pending", cancel_reason: null }]);
    // the Run was handed to the attempts queue
    expect(await fx.workQueue.queue(QUEUE_NAMES.attempts).getJob(runJobId(runs[0]!.id))).toBeTruthy();

    for (let i = 0; i < 10; i++) {
      await pollRepository(fx.deps, fullName);
      await handleHint(fx.deps, { installationId, repo: fullName, number: issue.number });
    }
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);
    const { rows } = await fx.db.pool.query(`SELECT projection->>'title' AS title, labels FROM items WHERE key = $1`, [itemKey(fullName, issue.number)]);
    expect(rows).toEqual([{ title: "Add dark mode", labels: [LABEL] }]);

    // the same, all at once: polls and Hints racing on one new content open one Run
    fx.sim.editIssue({ repo: fullName, number: issue.number, title: "Add dark mode, please" });
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 ? pollRepository(fx.deps, fullName) : handleHint(fx.deps, { installationId, repo: fullName, number: issue.number }),
      ),
    );
    expect((await runsOf(fx.db, fullName)).map((r) => r.state)).toEqual(["Canceled", "Pending"]);
  });

  it("supersedes the unstarted Run on a body edit, queues behind a Running one, and revokes when the label goes", async () => {
    const { fullName } = await installRepository(fx, { owner: "poll-b", name: "app" });
    const a = fx.sim.createIssue({ repo: fullName, title: "A", body: "first", labels: [] });
    fx.sim.createLabel({ repo: fullName, name: LABEL, color: "0e8a16" });
    fx.sim.addLabels({ repo: fullName, number: a.number, labels: [LABEL] });
    await pollRepository(fx.deps, fullName);
    const [first] = await runsOf(fx.db, fullName);

    fx.sim.editIssue({ repo: fullName, number: a.number, body: "second" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ opened: [expect.any(String)] });
    const afterEdit = await runsOf(fx.db, fullName);
    expect(afterEdit).toEqual([
      { id: first!.id, loop: "start-dev", number: a.number, state: "Canceled", cancel_reason: "Superseded" },
      { id: expect.any(String), loop: "start-dev", number: a.number, state: "Pending", cancel_reason: null },
    ]);

    // a started Attempt always finishes: the next edit's Event queues behind it
    const begun = await beginAttempt(fx.db, afterEdit[1]!.id, { token: "lease", workerId: "w" });
    expect(begun.tag).toBe("Started");
    fx.sim.editIssue({ repo: fullName, number: a.number, body: "third" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ opened: [] });
    const { rows: queued } = await fx.db.pool.query(`SELECT status FROM events WHERE repo = $1 ORDER BY received_at DESC LIMIT 1`, [fullName]);
    expect(queued).toEqual([{ status: "Queued" }]);
    expect((await runsOf(fx.db, fullName)).map((r) => r.state)).toEqual(["Canceled", "Running"]);

    const b = fx.sim.createIssue({ repo: fullName, title: "B", labels: [LABEL] });
    await pollRepository(fx.deps, fullName);
    fx.sim.removeLabel({ repo: fullName, number: b.number, label: LABEL });
    const revoked = await pollRepository(fx.deps, fullName);
    expect(revoked).toMatchObject({ revoked: [expect.any(String)] });
    const bRuns = (await runsOf(fx.db, fullName)).filter((r) => r.number === b.number);
    expect(bRuns).toEqual([{ id: expect.any(String), loop: "start-dev", number: b.number, state: "Canceled", cancel_reason: "Revoked" }]);
  });

  it("spends one conditional request per repository on an idle cycle (labels are listed when the config is read again), and no rate-limit budget", async () => {
    const repos = [
      await installRepository(fx, { owner: "idle", name: "one" }),
      await installRepository(fx, { owner: "idle", name: "two" }),
    ].map((r) => r.fullName);
    fx.sim.createIssue({ repo: repos[0]!, title: "x", labels: [] });
    // the first cycle reads everything; the second reads the 5-second overlap once; then idle
    await pollRepositories(fx.deps, repos);
    await pollRepositories(fx.deps, repos);
    fx.sim.resetCounters();
    const installation = fx.sim.state.installationForRepo(fx.sim.state.repoByFullName(repos[0]!))!;
    const budgetBefore = fx.github.rateLimits.snapshot(`installation:${installation.id}`).remaining;
    const outcomes = await pollRepositories(fx.deps, repos);
    expect(outcomes.map((o) => o.status === "polled" && o.listingModified)).toEqual([false, false]);
    const counts = fx.sim.counters;
    expect(counts.byCaller[`installation:${installation.id}`]).toEqual({ rest: 0, notModified: 2, graphql: 0, git: 0 });
    expect(counts.byRoute).toEqual({ "GET /repos/{owner}/{repo}/issues": 2 });
    expect(fx.github.rateLimits.snapshot(`installation:${installation.id}`).remaining).toBe(budgetBefore);
  });

  it("reads n changed pull requests in ⌈n/batch⌉ GraphQL queries and changed issues from the listing alone; a cycle without a probe reads the open ones again", async () => {
    const slices = new ItemSliceReader(fx.github, 5);
    const deps = { ...fx.deps, slices };
    const { fullName } = await installRepository(fx, { owner: "batch", name: "app" });
    await pollRepository(deps, fullName);
    await pollRepository(deps, fullName);
    for (let i = 0; i < 12; i++) openPull(fx.sim, fullName, { title: `PR ${i}` });
    for (let i = 0; i < 7; i++) fx.sim.createIssue({ repo: fullName, title: `Issue ${i}` });
    fx.sim.resetCounters();
    expect(await pollRepository(deps, fullName)).toMatchObject({ status: "polled", observed: 19 });
    expect(fx.sim.counters.graphql).toBe(3); // ⌈12/5⌉
    // a cycle without a probe ("poll now": a push, a label webhook, Check config now) reads every
    // open pull request again; the probe's ticks read only those whose mark changed (adaptive-poll.test.ts)
    fx.sim.resetCounters();
    await pollRepository(deps, fullName);
    expect(fx.sim.counters.graphql).toBe(3);
    expect((await cursor(fullName)).cursor_open_pulls).toHaveLength(12);
  });

  it("keeps the cursor when a GraphQL query fails mid-cycle, and the next cycle opens nothing twice", async () => {
    const slices = new ItemSliceReader(fx.github, 4);
    const deps = { ...fx.deps, slices };
    const config = `labels:
  - { name: ${LABEL}, color: 0e8a16 }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, '${LABEL}')
    agent: demo
    prompt: Implement \${{ item.number }}
  review:
    on: pull_requests
    if: contains(item.labels.*.name, '${LABEL}')
    agent: demo
    prompt: Review \${{ item.number }}
`;
    const { fullName } = await installRepository(fx, { owner: "fail", name: "app", config });
    await pollRepository(deps, fullName);
    const before = await cursor(fullName);
    for (let i = 0; i < 3; i++) fx.sim.createIssue({ repo: fullName, title: `Issue ${i}`, labels: [LABEL] });
    for (let i = 0; i < 8; i++) openPull(fx.sim, fullName, { title: `PR ${i}`, labels: [LABEL] });
    fx.sim.failNext({ method: "POST", path: "/graphql", status: 502, count: 1 });
    const failed = await pollRepository(deps, fullName);
    expect(failed).toMatchObject({ status: "failed", error: expect.stringContaining("502") });
    const kept = await cursor(fullName);
    expect(kept).toMatchObject({ cursor_since: before.cursor_since, cursor_etag: before.cursor_etag, poll_error: expect.stringContaining("502") });
    const openedInFailedCycle = (await runsOf(fx.db, fullName)).length;
    expect(openedInFailedCycle).toBe(3 + 4); // the issues and the batch that arrived

    const next = await pollRepository(deps, fullName);
    expect(next).toMatchObject({ status: "polled", opened: expect.any(Array) });
    if (next.status === "polled") expect(next.opened).toHaveLength(4);
    const runs = await runsOf(fx.db, fullName);
    expect(runs).toHaveLength(11);
    expect(new Set(runs.map((r) => `${r.loop}#${r.number}`)).size).toBe(11);
    expect((await cursor(fullName)).poll_error).toBeNull();
  });

  it("an if: that fails to evaluate fails the cycle and keeps the cursor: the next cycle reads the Item again; a prompt that fails to render does not", async () => {
    const config = `loops:
  start-dev:
    on: issues
    agent: demo
    prompt: Implement \${{ item.number }}
  parsed:
    on: issues
    if: fromJSON(item.body)
    agent: demo
    prompt: Parsed \${{ item.number }}
`;
    const { fullName } = await installRepository(fx, { owner: "poll-if", name: "app", config });
    await pollRepository(fx.deps, fullName);
    const before = await cursor(fullName);
    const issue = fx.sim.createIssue({ repo: fullName, title: "Not JSON yet", body: "{ not json" });
    const failed = await pollRepository(fx.deps, fullName);
    expect(failed).toMatchObject({ status: "failed", token: "expression_evaluation_failed", error: expect.stringContaining(`parsed on #${issue.number}`) });
    expect(await cursor(fullName)).toMatchObject({ cursor_since: before.cursor_since, poll_error: expect.stringContaining("cursor stays") });
    // the other Loops still judged the Item
    expect((await runsOf(fx.db, fullName)).map((r) => r.loop)).toEqual(["start-dev"]);

    // the body is fixed: the kept cursor lists the Item again, the if: holds, the cursor moves on
    fx.sim.editIssue({ repo: fullName, number: issue.number, body: "true" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "polled" });
    const after = await cursor(fullName);
    expect(after.poll_error).toBeNull();
    expect(after.cursor_since).not.toEqual(before.cursor_since);
    expect((await runsOf(fx.db, fullName)).filter((r) => r.state === "Pending").map((r) => r.loop).sort()).toEqual(["parsed", "start-dev"]);

    // a prompt that fails to render fails only its Loop: the cycle polls and the cursor moves
    const promptConfig = `loops:
  rendered:
    on: issues
    agent: demo
    prompt: "\${{ fromJSON(item.body) }}"
`;
    const other = await installRepository(fx, { owner: "poll-if", name: "prompt", config: promptConfig });
    await pollRepository(fx.deps, other.fullName);
    const promptBefore = await cursor(other.fullName);
    fx.sim.createIssue({ repo: other.fullName, title: "Not JSON", body: "{ not json" });
    expect(await pollRepository(fx.deps, other.fullName)).toMatchObject({ status: "polled" });
    expect((await cursor(other.fullName)).cursor_since).not.toEqual(promptBefore.cursor_since);
  });
});
