import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHintWorker } from "../../jobs/processors/hint";
import { bullConnection } from "../../jobs/queues";
import { appRunnerGitHub } from "../../lib/runner/app-github";
import { dispatchLoop } from "../../lib/triggers/dispatch";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { hintsSettled, installRepository, START_DEV_CONFIG, startFixture, startWebhookEndpoint, type Fixture } from "../github/support/fixture";
import { attemptsOf, startRunner, waitFor, type RunnerUnderTest } from "../runner/support/runner-fixture";

/**
 * Iteration on the App's own pull requests, through the simulator over HTTP with real git and
 * the demo agent: a Run opens a pull request; a reviewer's "request changes" with two threads,
 * or a red check of the CI, starts a same-branch Loop whose Run starts from the pull request's
 * head and pushes new commits to it — the same branch, the same pull request, no second one.
 */

// start-dev opens the pull request; address-review and fix-ci continue it
const CONFIG = `${START_DEV_CONFIG.replace("    agent: demo\n", "    agent: demo\n    approval: none\n")}  address-review:
    on: { comments: { mention: false } }
    if: comment.kind == 'review' && comment.review_state == 'CHANGES_REQUESTED'
    continue: same-branch
    agent: demo
    approval: none
    prompt: |
      Address \${{ comment.author }}'s review of #\${{ item.number }}: \${{ comment.body }}
      \${{ toJSON(item.review_threads) }}
  fix-ci:
    on: pull_requests
    if: contains(item.checks.*.failed, true) && item.actor_permission == 'write'
    continue: same-branch
    agent: demo
    approval: none
    prompt: |
      Fix the red checks of #\${{ item.number }}
      \${{ toJSON(item.checks) }}
`;

let fx: Fixture;
let endpoint: { close(): Promise<void> };
let hints: Worker;
let runner: RunnerUnderTest;
let root: string;
let repo: string;

beforeAll(async () => {
  fx = await startFixture();
  endpoint = await startWebhookEndpoint(fx);
  hints = createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
  await hints.waitUntilReady();
  root = mkdtempSync(join(tmpdir(), "atelier-iteration-"));
  runner = await startRunner({ db: fx.db, prefix: fx.prefix, github: appRunnerGitHub(fx.github, fx.db), workspaceRoot: root, workerId: "iteration", leaseTtlMs: 10_000 });
  ({ fullName: repo } = await installRepository(fx, { owner: "iter-org", name: "site", config: CONFIG }));
  fx.sim.createUser({ login: "writer" });
  fx.sim.createUser({ login: "reviewer" });
  fx.sim.setUserPermission({ repo, login: "writer", permission: "write" });
  fx.sim.setUserPermission({ repo, login: "reviewer", permission: "write" });
  await pollRepository(fx.deps, repo); // reads the config, creates the label
}, 120_000);

afterAll(async () => {
  await runner?.close();
  await hints?.close();
  await endpoint?.close();
  await fx?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

interface RunFacts {
  id: string;
  loop: string;
  number: number;
  state: string;
  prompt: string;
  branch: string | null;
  pull_request_number: number | null;
  head_sha: string | null;
  approval_required: boolean;
  actor: { login: string; source: string } | null;
  continues: string | null;
}

async function runsOfLoop(loop: string, number: number): Promise<RunFacts[]> {
  const { rows } = await fx.db.pool.query<RunFacts>(
    `SELECT r.id, r.loop, r.number, r.state::text AS state, r.prompt, r.branch, r.pull_request_number, r.head_sha, r.approval_required,
            e.submission->'actor' AS actor, e.submission->>'branch' AS continues
       FROM runs r JOIN events e ON e.id = r.event_id WHERE r.repo = $1 AND r.loop = $2 AND r.number = $3 ORDER BY r.created_at, r.id`,
    [repo, loop, number],
  );
  return rows;
}

async function settledRun(loop: string, number: number, index = 0): Promise<RunFacts> {
  const run = await waitFor(`${loop} on #${number} to settle`, async () => {
    const found = (await runsOfLoop(loop, number))[index];
    return found && ["Succeeded", "Failed", "Canceled"].includes(found.state) ? found : null;
  }, 120_000, 100);
  expect(run.state, JSON.stringify(await attemptsOf(fx.db, run.id))).toBe("Succeeded");
  return run;
}

const settled = () => hintsSettled(fx);

const pullsOf = () => fx.sim.state.itemsOf(fx.sim.state.repoByFullName(repo)).filter((i) => i.pull !== null);

/** An issue labeled by a writer, its start-dev Run, and the pull request that Run opened. */
async function agentPullRequest(title: string): Promise<{ issue: number; pr: number; branch: string; head: string }> {
  const issue = fx.sim.createIssue({ login: "writer", repo, title });
  fx.sim.addLabels({ login: "writer", repo, number: issue.number, labels: ["ready-for-agent"] });
  const run = await settledRun("start-dev", issue.number);
  expect(run.pull_request_number).not.toBeNull();
  const pr = fx.sim.state.findItem(fx.sim.state.repoByFullName(repo), run.pull_request_number!)!;
  expect(pr.pull!.headRef).toBe(`atelier/start-dev/${issue.number}`);
  await settled();
  return { issue: issue.number, pr: pr.number, branch: pr.pull!.headRef, head: pr.pull!.headSha };
}

/** The commits of a branch in the simulator's repository, newest first. */
async function branchLog(branch: string): Promise<string[]> {
  const { gitDir } = fx.sim.state.repoByFullName(repo);
  const { execFileSync } = await import("node:child_process");
  return execFileSync("git", ["--git-dir", gitDir, "log", "--format=%H", branch], { encoding: "utf8" }).trim().split("\n");
}

describe("iteration on the App's own pull request", () => {
  it("a reviewer's request for changes with two threads: a new Run on the same branch with both threads in its prompt, new commits on the same pull request", async () => {
    const { pr, branch, head } = await agentPullRequest("Fix the footer");
    const pullsBefore = pullsOf().length;

    fx.sim.review({
      login: "reviewer",
      repo,
      number: pr,
      event: "REQUEST_CHANGES",
      body: "Two things before this can go in.",
      comments: [
        { path: "footer.html", line: 3, body: "The year is wrong." },
        { path: "styles/site.css", line: 12, body: "Use the theme colour, not #fff." },
      ],
    });
    const run = await settledRun("address-review", pr);
    expect(run).toMatchObject({ approval_required: false, actor: { login: "reviewer", source: "comment" }, continues: branch });
    expect(run.prompt).toContain(`Address reviewer's review of #${pr}: Two things before this can go in.`);
    const threads = JSON.parse(run.prompt.slice(run.prompt.indexOf("\n") + 1)) as { path: string; line: number; resolved: boolean; comments: { author: string; body: string }[] }[];
    expect(threads).toEqual([
      { path: "footer.html", line: 3, resolved: false, outdated: false, comments: [{ author: "reviewer", body: "The year is wrong." }] },
      { path: "styles/site.css", line: 12, resolved: false, outdated: false, comments: [{ author: "reviewer", body: "Use the theme colour, not #fff." }] },
    ]);

    // the Run pushed to the pull request's branch: new commits on top of the old head, no second pull request
    expect(run).toMatchObject({ branch, pull_request_number: pr });
    const after = fx.sim.state.findItem(fx.sim.state.repoByFullName(repo), pr)!.pull!;
    expect(after.headRef).toBe(branch);
    expect(after.headSha).not.toBe(head);
    expect(after.headSha).toBe(run.head_sha);
    const log = await branchLog(branch);
    expect(log[0]).toBe(after.headSha);
    expect(log).toContain(head);
    expect(pullsOf()).toHaveLength(pullsBefore);
  });

  it("a redelivered review webhook opens no second Run", async () => {
    const { pr } = await agentPullRequest("Fix the header");
    const review = fx.sim.review({ login: "reviewer", repo, number: pr, event: "REQUEST_CHANGES", body: "Not yet.", comments: [{ path: "header.html", line: 1, body: "Typo." }] });
    const first = await settledRun("address-review", pr);
    await settled();

    const delivery = fx.sim.deliveries({ event: "pull_request_review" }).filter((d) => (d.payload.review as { id: number }).id === review.id).at(-1)!;
    fx.sim.redeliver({ id: delivery.id });
    await settled();
    expect(fx.sim.deliveries({ event: "pull_request_review" }).filter((d) => d.id === delivery.id && d.status === "delivered")).toHaveLength(2);
    expect((await runsOfLoop("address-review", pr)).map((r) => r.id)).toEqual([first.id]);
    const { rows } = await fx.db.pool.query(`SELECT id FROM events WHERE repo = $1 AND number = $2 AND loop = 'address-review'`, [repo, pr]);
    expect(rows).toHaveLength(1);
  });

  it("a failing check of the CI on the agent's pull request: the fix-CI Loop runs with the check's summary, on the same branch", async () => {
    const { pr, branch, head } = await agentPullRequest("Add the contact page");
    const pullsBefore = pullsOf().length;
    // the CI passes one job and fails another on the pull request's head
    fx.sim.finishCiCheck({ repo, number: pr, name: "lint", conclusion: "success", title: "No problems", summary: "0 warnings" });
    fx.sim.finishCiCheck({ repo, number: pr, name: "unit tests", conclusion: "failure", title: "2 tests failed", summary: "contact.test.ts: expected a form, found none" });

    const run = await settledRun("fix-ci", pr);
    // CI is no person: the continuation is the work of whoever started the Run that opened the pull request
    expect(run).toMatchObject({ approval_required: false, actor: { login: "writer", source: "origin" }, continues: branch, branch, pull_request_number: pr });
    expect(run.prompt).toContain(`Fix the red checks of #${pr}`);
    expect(run.prompt).toContain("contact.test.ts: expected a form, found none");
    const checks = JSON.parse(run.prompt.slice(run.prompt.indexOf("\n") + 1)) as { name: string; conclusion: string; failed: boolean; title: string }[];
    expect(checks.map((c) => [c.name, c.conclusion, c.failed, c.title])).toEqual([
      ["lint", "success", false, "No problems"],
      ["unit tests", "failure", true, "2 tests failed"],
    ]);

    const after = fx.sim.state.findItem(fx.sim.state.repoByFullName(repo), pr)!.pull!;
    expect(after.headRef).toBe(branch);
    expect(after.headSha).not.toBe(head);
    expect(await branchLog(branch)).toContain(head);
    expect(pullsOf()).toHaveLength(pullsBefore);
    // the new head has no red check yet: nothing more starts
    await settled();
    expect(await runsOfLoop("fix-ci", pr)).toHaveLength(1);
  });

  it("a commit status in error (an older CI's) starts the fix-CI Loop too, with its context and description", async () => {
    const { pr, head } = await agentPullRequest("Add the sitemap");
    fx.sim.commitStatus({ login: "writer", repo, sha: head, state: "pending", context: "ci/legacy", description: "Running" });
    await settled();
    expect(await runsOfLoop("fix-ci", pr)).toEqual([]); // pending is no verdict
    fx.sim.commitStatus({ login: "writer", repo, sha: head, state: "error", context: "ci/legacy", description: "sitemap.xml is not valid XML" });
    const run = await settledRun("fix-ci", pr);
    expect(run.prompt).toContain('"name": "ci/legacy"');
    expect(run.prompt).toContain("sitemap.xml is not valid XML");
  });

  it("a person's pull request from a branch of their own is not the App's: a same-branch Loop leaves it alone", async () => {
    const pr = await fx.sim.openPullRequest({ login: "writer", repo, head: "feature/about", title: "About page" });
    fx.sim.review({ login: "reviewer", repo, number: pr.number, event: "REQUEST_CHANGES", body: "Please rework.", comments: [{ path: "about.html", line: 2, body: "Too long." }] });
    fx.sim.finishCiCheck({ repo, number: pr.number, name: "unit tests", conclusion: "failure", title: "1 test failed", summary: "about.test.ts" });
    await settled();
    expect(await runsOfLoop("address-review", pr.number)).toEqual([]);
    expect(await runsOfLoop("fix-ci", pr.number)).toEqual([]);
  });

  it("run now: a same-branch Loop on the agent's pull request works on its branch; on a person's pull request it is refused with its token", async () => {
    const { pr, branch } = await agentPullRequest("Tidy the styles");
    const asked = { repo, loop: "fix-ci", actor: { login: "writer", permission: "write" } };
    expect(await dispatchLoop(fx.deps, { ...asked, number: pr })).toMatchObject({ tag: "Opened" });
    expect(await settledRun("fix-ci", pr)).toMatchObject({ continues: branch, branch, pull_request_number: pr, actor: { login: "writer", source: "operator" } });

    const theirs = await fx.sim.openPullRequest({ login: "writer", repo, head: "feature/styles", title: "Styles" });
    await expect(dispatchLoop(fx.deps, { ...asked, number: theirs.number })).rejects.toMatchObject({ token: "loop_continues_own_pull_requests", status: 400 });
    expect(await runsOfLoop("fix-ci", theirs.number)).toEqual([]);
  });
});
