import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRedis } from "../../lib/config/redis";
import { createGitHubApp } from "../../lib/github/app-client";
import { GitHubRateLimitedError } from "../../lib/github/rate-limit-errors";
import { silentLog } from "../../lib/github/log";
import { redisRateBlocks } from "../../lib/github/redis-rate-blocks";
import { installationCaller } from "../../lib/github/rate-limit";
import { eventually, installRepository, startFixture, type Fixture } from "./support/fixture";

let fx: Fixture;
const redis = createRedis();
const keyPrefix = `t-rate-${randomBytes(3).toString("hex")}:`;

beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.close();
  await redis.quit();
});

/** The GitHubApp of one worker process of the instance: its own Octokits and rate-limit memory, the instance's Redis. */
const workerApp = () => createGitHubApp(fx.settings, { log: silentLog, sharedRateBlocks: redisRateBlocks(redis, keyPrefix) });

it("a rate limit one worker meets holds for every worker of the instance: the others wait without asking GitHub", async () => {
  const { installationId } = await installRepository(fx, { owner: "shared-rate", name: "app" });
  const [first, second] = [workerApp(), workerApp()];
  const repo = { owner: "shared-rate", repo: "app" };
  await second.installationOctokit(installationId).request("GET /repos/{owner}/{repo}", repo); // its token, before the limit

  fx.sim.failNext({ path: "/repos/{owner}/{repo}/issues", status: "secondary-rate-limit", retryAfter: 30 });
  const met = await first.installationOctokit(installationId).request("GET /repos/{owner}/{repo}/issues", repo).catch((e: unknown) => e);
  expect(met).toBeInstanceOf(GitHubRateLimitedError);

  // the block reaches Redis off the request's path: wait until it is there
  await eventually(async () => ((await redisRateBlocks(redis, keyPrefix).blockedUntil(installationCaller(installationId), "core")) > 0 ? true : undefined));
  fx.sim.resetCounters();
  const waited = await second.installationOctokit(installationId).request("GET /repos/{owner}/{repo}", repo).catch((e: unknown) => e);
  expect(waited).toMatchObject({ token: "github_rate_limited", retryAfterSeconds: expect.any(Number) });
  expect((waited as GitHubRateLimitedError).retryAfterSeconds).toBeGreaterThan(25);
  expect(fx.sim.counters.rest).toBe(0); // nothing reached GitHub

  // another installation is not held back
  const other = await installRepository(fx, { owner: "shared-rate-2", name: "app" });
  await expect(second.installationOctokit(other.installationId).request("GET /repos/{owner}/{repo}", { owner: "shared-rate-2", repo: "app" })).resolves.toMatchObject({ status: 200 });
});
