import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis } from "../../lib/config/redis";
import { createGitHubApp } from "../../lib/github/app-client";
import { GitHubRateLimitedError } from "../../lib/github/rate-limit-errors";
import { ItemSliceReader } from "../../lib/github/graphql-items";
import { silentLog } from "../../lib/github/log";
import { installationCaller } from "../../lib/github/rate-limit";
import { rateLimitRefusal } from "../../lib/github/rate-limit-refusal";
import { redisRateBlocks } from "../../lib/github/redis-rate-blocks";
import { pollRepositories, pollRepository } from "../../lib/triggers/poll-repository";
import { eventually, installRepository, startFixture, type Fixture } from "./support/fixture";
import { openPull } from "./support/seed";

let fx: Fixture;
const redis = createRedis();
const keyPrefix = `t-ghfaults-${randomBytes(3).toString("hex")}:`;
const shared = redisRateBlocks(redis, keyPrefix);

beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.close();
  await redis.quit();
});

/** A clock the test moves forward, for the GitHub layer of one worker process. */
function movableClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => (offset += ms) };
}

const workerApp = (clock = movableClock()) => createGitHubApp(fx.settings, { log: silentLog, clock, sharedRateBlocks: shared });

describe("GitHub's rate-limit answers, read once", () => {
  it("reads a 403 or 429 without retry-after, x-ratelimit-remaining above 0, as a secondary limit; a 403 of permissions as a refusal", () => {
    const secondary = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    expect(rateLimitRefusal(403, { "x-ratelimit-remaining": "4321" }, secondary)).toEqual({ kind: "secondary", retryAfterMs: null });
    expect(rateLimitRefusal(429, { "x-ratelimit-remaining": "4321" })).toEqual({ kind: "secondary", retryAfterMs: null });
    expect(rateLimitRefusal(403, { "retry-after": "30", "x-ratelimit-remaining": "12" })).toEqual({ kind: "secondary", retryAfterMs: 30_000 });
    expect(rateLimitRefusal(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "100" })).toEqual({ kind: "primary", resetAt: 100_000 });
    expect(rateLimitRefusal(403, { "x-ratelimit-remaining": "4321" }, "Resource not accessible by integration")).toBeNull();
    expect(rateLimitRefusal(404, { "retry-after": "30" })).toBeNull();
  });
});

describe("a secondary limit without retry-after", () => {
  it("blocks the installation at least a minute, in every worker of the instance, then twice as long when it comes back", async () => {
    const { installationId } = await installRepository(fx, { owner: "secondary-bare", name: "app" });
    const clock = movableClock();
    const [first, second] = [workerApp(clock), workerApp()];
    const repo = { owner: "secondary-bare", repo: "app" };
    const issues = () => first.installationOctokit(installationId).request("GET /repos/{owner}/{repo}/issues", repo);
    await second.installationOctokit(installationId).request("GET /repos/{owner}/{repo}", repo); // its token, before the limit

    fx.sim.failNext({ path: "/repos/{owner}/{repo}/issues", status: "secondary-rate-limit", retryAfter: null });
    const met = await issues().catch((e: unknown) => e);
    expect(met).toBeInstanceOf(GitHubRateLimitedError);
    expect((met as GitHubRateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(60);

    // the block reaches Redis off the request's path: the other worker then waits without asking GitHub
    await eventually(async () => ((await shared.blockedUntil(installationCaller(installationId), "core")) > Date.now() ? true : undefined));
    fx.sim.resetCounters();
    const waited = await second.installationOctokit(installationId).request("GET /repos/{owner}/{repo}", repo).catch((e: unknown) => e);
    expect(waited).toMatchObject({ token: "github_rate_limited" });
    expect((waited as GitHubRateLimitedError).retryAfterSeconds).toBeGreaterThan(50);
    expect(fx.sim.counters.rest).toBe(0);

    // a minute later it is refused again: two minutes this time
    clock.advance(61_000);
    fx.sim.failNext({ path: "/repos/{owner}/{repo}/issues", status: "secondary-rate-limit", retryAfter: null, limitStatus: 429 });
    const again = await issues().catch((e: unknown) => e);
    expect(again).toBeInstanceOf(GitHubRateLimitedError);
    expect((again as GitHubRateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(120);

    // once a request goes through, the next limit starts from a minute again
    clock.advance(121_000);
    await expect(issues()).resolves.toMatchObject({ status: 200 });
    fx.sim.failNext({ path: "/repos/{owner}/{repo}/issues", status: "secondary-rate-limit", retryAfter: null });
    const fresh = (await issues().catch((e: unknown) => e)) as GitHubRateLimitedError;
    expect(fresh.retryAfterSeconds).toBeGreaterThanOrEqual(60);
    expect(fresh.retryAfterSeconds).toBeLessThan(120);
  });

  it("comes from a burst of content-creating requests, and the simulator lifts it when the minute has passed", async () => {
    const { installationId } = await installRepository(fx, { owner: "secondary-burst", name: "app" });
    const clock = movableClock();
    const app = workerApp(clock);
    const octokit = app.installationOctokit(installationId);
    const issue = fx.sim.createIssue({ repo: "secondary-burst/app", title: "Talkative" });
    const comment = (n: number) =>
      octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { owner: "secondary-burst", repo: "app", issue_number: issue.number, body: `note ${n}` });
    fx.sim.setSecondaryLimit({ perMinute: 3, retryAfter: null });
    try {
      for (let n = 0; n < 3; n++) await comment(n);
      const refused = await comment(3).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GitHubRateLimitedError);
      expect(fx.sim.state.commentsOf(fx.sim.state.repoByFullName("secondary-burst/app"), issue.number)).toHaveLength(3);
      // Atelier waits instead of trying again at once
      await expect(comment(4)).rejects.toBeInstanceOf(GitHubRateLimitedError);
      clock.advance(61_000);
      fx.sim.advanceClock({ ms: 61_000 });
      await expect(comment(5)).resolves.toMatchObject({ status: 201 });
    } finally {
      fx.sim.setSecondaryLimit({ perMinute: null });
    }
  });
});

describe("one repository's fault in a batch of the installation's Items", () => {
  it("a repository gone from the installation fails only its own poll: the other repositories' Items in the same GraphQL query are judged", async () => {
    // a reader that waits long enough for the two repositories' reads to share one query
    const deps = { ...fx.deps, slices: new ItemSliceReader(fx.github, 50, 2_000) };
    const kept = await installRepository(fx, { owner: "vanish", name: "kept" });
    const gone = await installRepository(fx, { owner: "vanish", name: "gone" });
    for (const repo of [kept, gone]) openPull(fx.sim, repo.fullName, { title: `Change of ${repo.fullName}` });
    expect(await pollRepositories(deps, [kept.fullName, gone.fullName])).toMatchObject([{ status: "polled" }, { status: "polled" }]);

    fx.sim.removeRepository({ repo: gone.fullName });
    fx.sim.resetCounters();
    const [keptOutcome, goneOutcome] = await pollRepositories(deps, [kept.fullName, gone.fullName]);
    expect(fx.sim.counters.graphql).toBe(1); // one query held both repositories' pull requests
    expect(keptOutcome).toMatchObject({ status: "polled", observed: 1, cursorWritten: true });
    expect(goneOutcome).toMatchObject({ status: "failed", error: expect.stringContaining("404") }); // its own calls say the repository is gone
    // the kept one goes on polling as before
    expect(await pollRepository(deps, kept.fullName)).toMatchObject({ status: "polled" });
  });

  it("an error on one Item's alias fails that Item's read only: the other reads of the same query get their nodes", async () => {
    fx.sim.createOrg({ login: "alias-error" });
    await fx.sim.createRepo({ owner: "alias-error", name: "app" });
    // the installation may read pull requests but not issues: GitHub answers FORBIDDEN on the issue's alias
    const { id: installationId } = fx.sim.createInstallation({ account: "alias-error", repos: ["app"], permissions: { metadata: "read", pull_requests: "read" } });
    const pull = openPull(fx.sim, "alias-error/app", { title: "Readable" });
    const issue = fx.sim.createIssue({ repo: "alias-error/app", title: "Not readable" });
    const reader = new ItemSliceReader(fx.github, 50, 2_000);
    fx.sim.resetCounters();
    const [pullRead, issueRead] = await Promise.allSettled([
      reader.read(installationId, [{ repo: "alias-error/app", number: pull, kind: "pull_request" }]),
      reader.read(installationId, [{ repo: "alias-error/app", number: issue.number, kind: "issue" }]),
    ]);
    expect(fx.sim.counters.graphql).toBe(1);
    expect(pullRead).toMatchObject({ status: "fulfilled", value: [{ number: pull, title: "Readable" }] });
    expect(issueRead).toMatchObject({ status: "rejected", reason: { token: "github_request_failed", message: expect.stringContaining("FORBIDDEN") } });
  });
});
