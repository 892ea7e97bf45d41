import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listChangedItems } from "../../lib/github/issues-listing";
import { handleHint } from "../../lib/triggers/handle-hint";
import { pollDueRepositories } from "../../lib/triggers/poll-installation";
import { MAX_POLL_INTERVAL_SECONDS } from "../../lib/triggers/poll-interval";
import { forceMergeable } from "../../lib/sandbox/state/pulls";
import { installRepository, runsOf, START_DEV_CONFIG, startFixture, type Fixture } from "../github/support/fixture";
import { openPull } from "../github/support/seed";
import { reconcileInstallations } from "../../lib/github/installation-sync";

// the triggers read the simulator's clock: a test moves both at once, and no test waits
let fx: Fixture;
beforeAll(async () => {
  let now = (): number => Date.now();
  fx = await startFixture({ deps: { clock: { now: () => now() } } });
  now = () => fx.sim.now().epochMs;
});
afterAll(() => fx.close());

async function interval(repo: string): Promise<number | null> {
  const { rows } = await fx.db.pool.query<{ poll_interval_s: number | null }>(`SELECT poll_interval_s FROM repositories WHERE full_name = $1`, [repo]);
  return rows[0]!.poll_interval_s;
}

/** Moves the clock by `seconds` and runs one poll tick; the outcome of `repo`, if it was due. */
async function tickAfter(seconds: number, repo: string) {
  fx.sim.advanceClock({ ms: seconds * 1000 });
  return (await pollDueRepositories(fx.deps)).find((o) => o.repo === repo) ?? null;
}

describe("adaptive polling", () => {
  it("backs a quiet repository off, finds a change within the longest interval, and comes back on a webhook", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "adapt-a", name: "app" });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Quiet for now", body: "" });

    expect(await tickAfter(1, fullName)).toMatchObject({ status: "polled", fresh: true });
    expect(await interval(fullName)).toBe(60);
    // the next cycle settles the watermark (its listing of the overlap is a 304): nothing changed
    expect(await tickAfter(61, fullName)).toMatchObject({ status: "polled", fresh: false, listingModified: false });
    expect(await interval(fullName)).toBe(120);
    expect(await tickAfter(61, fullName)).toBeNull(); // not due yet: no call at all
    // then the probe alone answers, and each quiet probe doubles the interval up to the longest
    expect(await tickAfter(60, fullName)).toEqual({ status: "quiet", repo: fullName });
    expect(await interval(fullName)).toBe(MAX_POLL_INTERVAL_SECONDS);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS + 1, fullName)).toEqual({ status: "quiet", repo: fullName });
    expect(await interval(fullName)).toBe(MAX_POLL_INTERVAL_SECONDS);

    // the label put on while it is backed off, with no webhook: found by the next probe, within the longest interval
    fx.sim.advanceClock({ ms: 1000 });
    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: ["ready-for-agent"] });
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS - 60, fullName)).toBeNull();
    expect(await tickAfter(60, fullName)).toMatchObject({ status: "polled", opened: [expect.any(String)] });
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);
    expect(await interval(fullName)).toBe(60);

    // quiet again, backed off; a webhook's Hint brings it back to the shortest interval, due at once
    expect(await tickAfter(61, fullName)).toMatchObject({ status: "polled", listingModified: false });
    expect(await tickAfter(121, fullName)).toMatchObject({ status: "quiet" });
    expect(await interval(fullName)).toBe(MAX_POLL_INTERVAL_SECONDS);
    await handleHint(fx.deps, { installationId, repo: fullName, number: issue.number });
    expect(await interval(fullName)).toBeNull();
    expect(await tickAfter(1, fullName)).toMatchObject({ status: "quiet" });
    expect(await interval(fullName)).toBe(60);
  });

  it("reads again the open pull request whose mergeability changed without an update, and no other", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-b", name: "app" });
    const [first, second] = [openPull(fx.sim, fullName, { title: "One" }), openPull(fx.sim, fullName, { title: "Two" })];
    for (const n of [first, second]) forceMergeable(fx.sim.state.findItem(fx.sim.state.repoByFullName(fullName), n)!, true);
    await tickAfter(1, fullName);
    await tickAfter(61, fullName);
    expect(await tickAfter(121, fullName)).toMatchObject({ status: "quiet" });

    // the base moved: GitHub says the second conflicts now, and its updatedAt stays
    forceMergeable(fx.sim.state.findItem(fx.sim.state.repoByFullName(fullName), second)!, false);
    expect(await tickAfter(241, fullName)).toMatchObject({ status: "polled", observed: 1 });
    const { rows } = await fx.db.pool.query(`SELECT number, projection->>'mergeable' AS mergeable FROM items WHERE repo = $1 ORDER BY number`, [fullName]);
    expect(rows).toEqual([
      { number: first, mergeable: "true" },
      { number: second, mergeable: "false" },
    ]);
    expect(await interval(fullName)).toBe(60);
  });
});

/** One poll tick (15 s, as the scheduler ticks). */
const TICK_SECONDS = 15;

/** What polling alone promises (docs/loops.md): a change is read within the longest interval and a tick. */
const POLL_BOUND_SECONDS = MAX_POLL_INTERVAL_SECONDS + TICK_SECONDS;

/** Ticks until the repository is quiet at the longest interval. */
async function settle(repo: string): Promise<void> {
  for (let i = 0; i < 40 && (await interval(repo)) !== MAX_POLL_INTERVAL_SECONDS; i++) await tickAfter(TICK_SECONDS, repo);
  expect(await interval(repo)).toBe(MAX_POLL_INTERVAL_SECONDS);
}

/** Ticks (virtual clock) until `seen` holds; the virtual seconds it took, printed. */
async function secondsUntil(what: string, repo: string, seen: () => Promise<boolean>): Promise<number> {
  const start = fx.sim.now().epochMs;
  for (let i = 0; i < 2 * (POLL_BOUND_SECONDS / TICK_SECONDS) && !(await seen()); i++) await tickAfter(TICK_SECONDS, repo);
  const seconds = (fx.sim.now().epochMs - start) / 1000;
  console.log(`${what}: seen by polling alone after ${seconds} s (bound ${POLL_BOUND_SECONDS} s)`);
  return seconds;
}

describe("polling alone backs up every webhook", () => {
  const FIX_CI = `${START_DEV_CONFIG}  fix-ci:
    on: pull_requests
    if: contains(item.checks.*.failed, true) && item.state == 'open'
    agent: demo
    prompt: Make the checks of #\${{ item.number }} pass.
`;

  it("a red check on an open pull request, its webhooks lost, opens the fix-CI Run within the bound", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-ci", name: "app", config: FIX_CI });
    const number = openPull(fx.sim, fullName, { title: "Green so far" });
    const { sha } = fx.sim.finishCiCheck({ repo: fullName, number, name: "unit tests", conclusion: "success" });
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });

    // CI goes red on the same head: no webhook reaches Atelier, and the pull request's updatedAt stays
    fx.sim.finishCiCheck({ repo: fullName, sha, name: "unit tests", conclusion: "failure", summary: "1 failed" });
    const fixCi = async () => (await runsOf(fx.db, fullName)).some((r) => r.loop === "fix-ci" && r.number === number);
    expect(await secondsUntil("red check", fullName, fixCi)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    // the mark read with the pull request is the probe's: quiet again at once
    expect(await tickAfter(61, fullName)).toMatchObject({ status: "quiet" });
  });

  it("a failing commit status, its webhook lost, opens it within the bound as a check run does", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-status", name: "app", config: FIX_CI });
    const number = openPull(fx.sim, fullName, { title: "Statuses" });
    await settle(fullName);
    fx.sim.commitStatus({ repo: fullName, sha: "a".repeat(40), state: "error", context: "ci/legacy" });
    const fixCi = async () => (await runsOf(fx.db, fullName)).some((r) => r.loop === "fix-ci" && r.number === number);
    expect(await secondsUntil("failing commit status", fullName, fixCi)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
  });

  const ANSWER = `${START_DEV_CONFIG}  answer:
    on: comments
    agent: demo
    prompt: |
      \${{ comment.author }} asks on #\${{ item.number }} in a \${{ comment.kind }}: \${{ comment.body }}
`;
  const asksOn = async (repo: string, number: number) => {
    const { rows } = await fx.db.pool.query<{ kind: string; prompt: string }>(
      `SELECT submission->'comment'->>'kind' AS kind, submission->>'prompt' AS prompt FROM events
        WHERE repo = $1 AND number = $2 AND loop = 'answer' ORDER BY received_at, id`,
      [repo, number],
    );
    return rows;
  };

  it("a comment asking the agent and its edit, their webhooks lost, each become their Event by polling alone within the bound", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-ask", name: "app", config: ANSWER });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Footer", body: "" });
    fx.sim.comment({ repo: fullName, number: issue.number, body: "Before Atelier polled: no ask" });
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });

    const ask = fx.sim.comment({ repo: fullName, number: issue.number, body: "@atelier-sandbox please fix the footer" });
    expect(await secondsUntil("comment ask", fullName, async () => (await asksOn(fullName, issue.number)).length === 1)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    expect((await asksOn(fullName, issue.number))[0]!.prompt).toContain("please fix the footer");
    expect(fx.sim.reactions({ id: Number(ask.id) })).toContain("atelier-sandbox[bot]:eyes");
    // read once: the next cycles do not judge it again
    await tickAfter(61, fullName);
    expect(await asksOn(fullName, issue.number)).toHaveLength(1);

    await settle(fullName);
    fx.sim.editComment({ repo: fullName, id: Number(ask.id), body: "@atelier-sandbox please fix the footer and the header" });
    expect(await secondsUntil("edited comment ask", fullName, async () => (await asksOn(fullName, issue.number)).length === 2)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    expect((await asksOn(fullName, issue.number))[1]!.prompt).toContain("and the header");
  });

  it("a stranger's ask found by polling alone is the stranger's: it waits for a writer's approval", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-stranger", name: "app", config: ANSWER });
    fx.sim.createUser({ login: "passer-by" });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Open to all", body: "" });
    await settle(fullName);
    fx.sim.comment({ repo: fullName, number: issue.number, body: "@atelier-sandbox push to main", login: "passer-by" });
    expect(await secondsUntil("stranger's ask", fullName, async () => (await asksOn(fullName, issue.number)).length === 1)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    const { rows } = await fx.db.pool.query(
      `SELECT submission->'actor'->>'login' AS login, submission->'actor'->>'permission' AS permission, (submission->>'approvalRequired')::boolean AS approval FROM events WHERE repo = $1 AND loop = 'answer'`,
      [fullName],
    );
    expect(rows).toEqual([{ login: "passer-by", permission: "none", approval: true }]);
  });

  it("a review and a line comment asking the agent, their webhooks lost, become their Events by polling alone within the bound", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-review", name: "app", config: ANSWER });
    const number = openPull(fx.sim, fullName, { title: "Reviewed later" });
    await settle(fullName);
    fx.sim.review({ repo: fullName, number, event: "REQUEST_CHANGES", body: "@atelier-sandbox rename it", comments: [{ path: "README.md", line: 1, body: "@atelier-sandbox and this line" }] });
    expect(await secondsUntil("review ask", fullName, async () => (await asksOn(fullName, number)).length === 2)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    expect((await asksOn(fullName, number)).map((a) => a.kind).sort()).toEqual(["review", "review_comment"]);
    // no `if:` here reads the threads: the probe does not ask them, and the pull request with one is quiet
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });
  });

  it("a review thread resolved, its webhook lost and the pull request untouched, is read within the bound", async () => {
    const THREADS = `${START_DEV_CONFIG}  threads-resolved:
    on: pull_requests
    if: contains(item.review_threads.*.resolved, true)
    agent: demo
    prompt: The threads of #\${{ item.number }} are settled.
`;
    const { fullName } = await installRepository(fx, { owner: "adapt-thread", name: "app", config: THREADS });
    const number = openPull(fx.sim, fullName, { title: "Reviewed" });
    const { comments } = fx.sim.review({ repo: fullName, number, event: "COMMENT", comments: [{ path: "README.md", line: 1, body: "Why this?" }] });
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });
    const updatedAt = fx.sim.state.findItem(fx.sim.state.repoByFullName(fullName), number)!.updatedAt;

    fx.sim.resolveReviewThread({ repo: fullName, number, commentId: comments[0]! });
    expect(fx.sim.state.findItem(fx.sim.state.repoByFullName(fullName), number)!.updatedAt).toBe(updatedAt);
    const resolved = async () => (await runsOf(fx.db, fullName)).some((r) => r.loop === "threads-resolved" && r.number === number);
    expect(await secondsUntil("resolved review thread", fullName, resolved)).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
    // the threads read with the pull request are the probe's: quiet again at once
    expect(await tickAfter(61, fullName)).toMatchObject({ status: "quiet" });
  });

  const loopsOf = async (repo: string) => {
    const { rows } = await fx.db.pool.query<{ loops: string[] }>(`SELECT ARRAY(SELECT jsonb_array_elements(config->'loops')->>'name') AS loops FROM repositories WHERE full_name = $1`, [repo]);
    return rows[0]!.loops;
  };
  const TRIAGE = `${START_DEV_CONFIG}  triage:
    on: issues
    if: item.state == 'open'
    agent: demo
    prompt: Triage #\${{ item.number }}.
`;

  it("a pushed config change, its push webhook lost, is read within the bound", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-cfg", name: "app" });
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });
    expect(await loopsOf(fullName)).toEqual(["start-dev"]);
    await fx.sim.pushCommit({ repo: fullName, branch: "main", files: { ".github/atelier.yml": TRIAGE } });
    expect(await secondsUntil("pushed config", fullName, async () => (await loopsOf(fullName)).includes("triage"))).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
  });

  it("a change of the owner's .github config, its push webhook lost, is read within the bound by the repositories it configures", async () => {
    const org = await installRepository(fx, { owner: "adapt-org", name: ".github" });
    const { fullName } = await installRepository(fx, { owner: "adapt-org", name: "app", config: null });
    await settle(fullName);
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS, fullName)).toMatchObject({ status: "quiet" });
    expect(await loopsOf(fullName)).toEqual(["start-dev"]);
    await fx.sim.pushCommit({ repo: org.fullName, branch: "main", files: { ".github/atelier.yml": TRIAGE } });
    expect(await secondsUntil("owner's .github config", fullName, async () => (await loopsOf(fullName)).includes("triage"))).toBeLessThanOrEqual(POLL_BOUND_SECONDS);
  });
});

describe("conditional requests", () => {
  it("a repository whose name another takes, its webhooks lost, is retired at the next probe: nothing of the newcomer is read into it (attack 23)", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-r", name: "app" });
    const original = fx.sim.state.repoByFullName(fullName).id;
    fx.sim.createIssue({ repo: fullName, title: "Ours", body: "" });
    expect(await tickAfter(1, fullName)).toMatchObject({ status: "polled" });
    const row = async () => (await fx.db.pool.query<{ full_name: string; retired: boolean }>(`SELECT full_name, retired_at IS NOT NULL AS retired FROM repositories WHERE id = $1`, [original])).rows[0];

    // renamed, no webhook: GitHub's GraphQL still follows the old name to it, so the probe finds its own id
    fx.sim.renameRepo({ repo: fullName, to: "app-renamed" });
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS + 1, fullName)).not.toMatchObject({ reason: "name_taken" });
    expect(await row()).toEqual({ full_name: fullName, retired: false });

    // an organization member creates a repository under the old name, with a labelled issue
    await fx.sim.createRepo({ owner: "adapt-r", name: "app", files: { ".github/atelier.yml": START_DEV_CONFIG } });
    fx.sim.addRepository({ repo: fullName });
    fx.sim.createIssue({ repo: fullName, title: "Theirs", body: "", labels: ["ready-for-agent"] });
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS + 1, fullName)).toEqual({ status: "skipped", repo: fullName, reason: "name_taken", nextAllowedAt: null });
    expect(await row()).toEqual({ full_name: `${fullName}#${original}`, retired: true });
    expect(await runsOf(fx.db, fullName)).toEqual([]);

    // the reconcile finds it under its new name: it comes back with its rows, and the newcomer is registered as itself
    await reconcileInstallations(fx.deps);
    expect(await row()).toEqual({ full_name: "adapt-r/app-renamed", retired: false });
    const items = await fx.db.pool.query<{ repo: string; title: string }>(`SELECT repo, title FROM items WHERE repository_id = $1`, [original]);
    expect(items.rows).toEqual([{ repo: "adapt-r/app-renamed", title: "Ours" }]);
  });

  it("with the change probe failing, a repository whose name another takes is retired before its poll: nothing of the newcomer is read into it (attack 23)", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-rf", name: "app" });
    const original = fx.sim.state.repoByFullName(fullName).id;
    fx.sim.createIssue({ repo: fullName, title: "Ours", body: "" });
    expect(await tickAfter(1, fullName)).toMatchObject({ status: "polled" });

    fx.sim.renameRepo({ repo: fullName, to: "app-renamed" });
    await fx.sim.createRepo({ owner: "adapt-rf", name: "app", files: { ".github/atelier.yml": START_DEV_CONFIG } });
    fx.sim.addRepository({ repo: fullName });
    fx.sim.createIssue({ repo: fullName, title: "Theirs", body: "", labels: ["ready-for-agent"] });
    // the probe (the tick's first GraphQL query) fails: each repository is polled by name
    const injected = fx.sim.counters.injectedFailures;
    fx.sim.failNext({ method: "POST", path: "/graphql", status: 502 });
    expect(await tickAfter(MAX_POLL_INTERVAL_SECONDS + 1, fullName)).toEqual({ status: "skipped", repo: fullName, reason: "name_taken", nextAllowedAt: null });
    expect(fx.sim.counters.injectedFailures).toBe(injected + 1);
    const { rows } = await fx.db.pool.query(`SELECT full_name, retired_at IS NOT NULL AS retired FROM repositories WHERE id = $1`, [original]);
    expect(rows).toEqual([{ full_name: `${fullName}#${original}`, retired: true }]);
    const items = await fx.db.pool.query<{ title: string }>(`SELECT title FROM items WHERE repository_id = $1`, [original]);
    expect(items.rows).toEqual([{ title: "Ours" }]);
    expect(await runsOf(fx.db, fullName)).toEqual([]);
  });

  it("with the change probe failing, a repository still holding its name is polled as before", async () => {
    const { fullName } = await installRepository(fx, { owner: "adapt-rg", name: "app" });
    fx.sim.createIssue({ repo: fullName, title: "Ours", body: "" });
    expect(await tickAfter(1, fullName)).toMatchObject({ status: "polled" });

    fx.sim.createIssue({ repo: fullName, title: "Ready", body: "", labels: ["ready-for-agent"] });
    const injected = fx.sim.counters.injectedFailures;
    fx.sim.failNext({ method: "POST", path: "/graphql", status: 502 });
    expect(await tickAfter(61, fullName)).toMatchObject({ status: "polled", opened: [expect.any(String)] });
    expect(fx.sim.counters.injectedFailures).toBe(injected + 1);
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);
  });

  it("a 304 costs no rate-limit point", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "adapt-c", name: "app" });
    fx.sim.createIssue({ repo: fullName, title: "Listed", body: "" });
    const octokit = fx.github.installationOctokit(installationId);
    const first = await listChangedItems(octokit, fullName, { since: null, etag: null });
    if (!first.modified) throw new Error("the first listing is a 200");
    const used = async () => ((await octokit.request("GET /rate_limit")).data as { resources: { core: { used: number } } }).resources.core.used;
    const before = await used();
    const counted = fx.sim.counters.byCaller[`installation:${installationId}`]!.notModified;
    expect(await listChangedItems(octokit, fullName, { since: null, etag: first.etag })).toEqual({ modified: false });
    expect(fx.sim.counters.byCaller[`installation:${installationId}`]!.notModified).toBe(counted + 1);
    expect(await used()).toBe(before);
  });
});
