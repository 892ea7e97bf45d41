import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadGitHubAppSettings } from "../../lib/github/app-settings";
import { createGitHubApp } from "../../lib/github/app-client";
import type { Clock } from "../../lib/github/clock";
import { GitHubRateLimitedError } from "../../lib/github/rate-limit-errors";
import { ensureLabels, addLabels, removeLabel } from "../../lib/github/ensure-labels";
import { silentLog } from "../../lib/github/log";
import { openOrUpdatePullRequest } from "../../lib/github/pull-requests";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, startFixture, type Fixture } from "./support/fixture";

class TestClock implements Clock {
  ms = Date.now();
  now(): number {
    return this.ms;
  }
}

const clock = new TestClock();
let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture({ clock });
});
afterAll(() => fx.close());

describe("installation tokens", () => {
  it("are cached and renewed five minutes before they expire", async () => {
    const { installationId } = await installRepository(fx, { owner: "tok", name: "one" });
    fx.github.tokens.forgetInstallation(installationId); // reconcile already minted one
    fx.sim.resetCounters();
    const first = await fx.github.tokens.get(installationId);
    expect(await fx.github.tokens.get(installationId)).toBe(first);
    expect(fx.sim.counters.byRoute["POST /app/installations/{installation_id}/access_tokens"]).toBe(1);
    clock.ms = first.expiresAt.getTime() - 6 * 60_000;
    expect(await fx.github.tokens.get(installationId)).toBe(first);
    clock.ms = first.expiresAt.getTime() - 4 * 60_000;
    const renewed = await fx.github.tokens.get(installationId);
    expect(renewed.token).not.toBe(first.token);
    expect(fx.sim.counters.byRoute["POST /app/installations/{installation_id}/access_tokens"]).toBe(2);
    clock.ms = Date.now();
  });

  it("mintRepositoryToken gives a token for one repository with the agent's permissions only", async () => {
    const { installationId } = await installRepository(fx, { owner: "tok", name: "two" });
    const { token } = await fx.github.mintRepositoryToken(installationId, fx.sim.state.repoByFullName("tok/two").id);
    const get = (path: string) => fetch(`${fx.sim.url}${path}`, { headers: { authorization: `token ${token}` } });
    expect((await get("/repos/tok/two")).status).toBe(200);
    expect((await get("/repos/tok/one")).status).toBe(404);
    const check = await fetch(`${fx.sim.url}/repos/tok/two/check-runs`, {
      method: "POST",
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x", head_sha: "a".repeat(40) }),
    });
    expect(check.status).toBe(403); // checks are Atelier's, not the agent's
  });

  it("a wrong private key is refused with a message that says what to fix", async () => {
    const { installationId } = await installRepository(fx, { owner: "tok", name: "three" });
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const wrong = createGitHubApp({ ...fx.settings, privateKey }, { log: silentLog });
    await expect(wrong.tokens.get(installationId)).rejects.toMatchObject({
      token: "github_app_auth_failed",
      message: expect.stringContaining(`not a private key of App ${fx.settings.appId}`),
    });
  });
});

describe("rate limits", () => {
  it("an exhausted budget stops requests until the reset, and the poll waits instead of hammering", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "rate", name: "app" });
    await pollRepository(fx.deps, fullName);
    fx.sim.setRateLimit({ caller: `installation:${installationId}`, limit: 1 });
    const octokit = fx.github.installationOctokit(installationId);
    await octokit.request("GET /repos/{owner}/{repo}", { owner: "rate", repo: "app" }).catch(() => undefined);
    const refused = await octokit.request("GET /repos/{owner}/{repo}", { owner: "rate", repo: "app" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GitHubRateLimitedError);
    const next = fx.github.nextAllowedAt(installationId);
    expect(next!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    fx.sim.resetCounters();
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ status: "skipped", reason: "rate_limited", nextAllowedAt: next });
    expect(fx.sim.counters.rest + fx.sim.counters.notModified).toBe(0);
  });

  it("a secondary limit's Retry-After is honoured", async () => {
    const { installationId } = await installRepository(fx, { owner: "rate2", name: "app" });
    const octokit = fx.github.installationOctokit(installationId);
    fx.sim.failNext({ path: "/repos/{owner}/{repo}/issues", status: "secondary-rate-limit", retryAfter: 30 });
    const err = await octokit.request("GET /repos/{owner}/{repo}/issues", { owner: "rate2", repo: "app" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ token: "github_rate_limited", retryAfterSeconds: 30 });
    // thirty seconds on the GitHub layer's own clock (this file's is still), not on the wall's
    expect(fx.github.nextAllowedAt(installationId)!.getTime()).toBe(clock.now() + 30_000);
  });
});

describe("labels and pull requests", () => {
  it("ensureLabels creates what is missing once, then costs a 304", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "lbl", name: "app" });
    const octokit = fx.github.installationOctokit(installationId);
    fx.sim.createLabel({ repo: fullName, name: "Ready-For-Agent", color: "ededed" });
    const wanted = [
      { name: "ready-for-agent", color: "0e8a16" },
      { name: "agent-working", color: "fbca04", description: "An agent works on it" },
    ];
    const first = await ensureLabels(octokit, fullName, wanted, null);
    expect(first).toEqual({ etag: null, created: ["agent-working"], listed: true });
    const second = await ensureLabels(octokit, fullName, wanted, first.etag);
    expect(second).toMatchObject({ created: [], etag: expect.any(String) });
    fx.sim.resetCounters();
    expect(await ensureLabels(octokit, fullName, wanted, second.etag)).toMatchObject({ listed: false });
    expect(fx.sim.counters.notModified).toBe(1);
    // a label declared later is created although the list did not change
    const more = [...wanted, { name: "in-review", color: "5319e7" }];
    expect(await ensureLabels(octokit, fullName, more, second.etag)).toMatchObject({ listed: true, created: ["in-review"] });

    const issue = fx.sim.createIssue({ repo: fullName, title: "l" });
    await addLabels(octokit, fullName, issue.number, ["agent-working"]);
    await removeLabel(octokit, fullName, issue.number, "agent-working");
    await removeLabel(octokit, fullName, issue.number, "agent-working"); // not there: fine
    expect(fx.sim.state.item(fx.sim.state.repoByFullName(fullName), issue.number).labels).toEqual([]);
  });

  it("openOrUpdatePullRequest opens the branch's pull request, then updates it", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "pr", name: "app" });
    await fx.sim.pushCommit({ repo: fullName, branch: "atelier/run-1", files: { "a.txt": "a\n" } });
    const octokit = fx.github.installationOctokit(installationId);
    const opened = await openOrUpdatePullRequest(octokit, fullName, { branch: "atelier/run-1", title: "First", body: "one" });
    expect(opened).toMatchObject({ created: true, number: expect.any(Number) });
    const updated = await openOrUpdatePullRequest(octokit, fullName, { branch: "atelier/run-1", title: "Second", body: "two" });
    expect(updated).toMatchObject({ created: false, number: opened.number });
    expect(fx.sim.state.item(fx.sim.state.repoByFullName(fullName), opened.number).title).toBe("Second");
  });
});

describe("App settings", () => {
  it("reads the sandbox file and says what to fix in a bad environment", async () => {
    const dir = await mkdtemp(join(tmpdir(), "atelier-app-"));
    const file = join(dir, "sandbox-app.json");
    await writeFile(file, JSON.stringify({ baseUrl: fx.sim.url, ...fx.sim.app }));
    const settings = await loadGitHubAppSettings({ env: { ATELIER_SANDBOX_APP_FILE: file } });
    expect(settings).toMatchObject({ appId: fx.sim.app.id, baseUrl: fx.sim.url, source: "sandbox-file" });

    const key = fx.sim.app.privateKey.replace(/\n/g, "\\n");
    expect(await loadGitHubAppSettings({ env: { GITHUB_APP_ID: "12", GITHUB_PRIVATE_KEY: key, GITHUB_WEBHOOK_SECRET: "s" } })).toMatchObject({
      appId: 12,
      baseUrl: "https://api.github.com",
      source: "env",
    });
    await expect(loadGitHubAppSettings({ env: { GITHUB_APP_ID: "12", GITHUB_PRIVATE_KEY: "not a key", GITHUB_WEBHOOK_SECRET: "s" } })).rejects.toMatchObject({
      token: "github_private_key_invalid",
      message: expect.stringContaining("the whole .pem file"),
    });
    await expect(loadGitHubAppSettings({ env: { GITHUB_APP_ID: "12", GITHUB_PRIVATE_KEY: key } })).rejects.toMatchObject({
      token: "github_webhook_secret_missing",
      message: expect.stringContaining("GITHUB_WEBHOOK_SECRET"),
    });
    await expect(loadGitHubAppSettings({ env: { GITHUB_APP_ID: "abc", GITHUB_PRIVATE_KEY: key, GITHUB_WEBHOOK_SECRET: "s" } })).rejects.toMatchObject({
      token: "github_app_id_invalid",
    });
    await expect(loadGitHubAppSettings({ env: {} })).rejects.toMatchObject({ token: "github_app_not_configured" });
  });
});
