import type { Page } from "@playwright/test";
import type pg from "pg";
import { expect, sim, signIn, stack, test } from "./support";
import { CLAUDE_ENV_ANSWER } from "./real-agent-script";

/**
 * An environment through the whole product, as a user sees it: a repository whose tests need
 * two packages of the local npm registry (the instance's only `registries:` entry, see
 * e2e/global-setup.ts) declares `setup:` and `verify:`. The first Attempt runs setup in the
 * sandbox (its own group in the transcript), the real Claude Code CLI (agent `claude-env`,
 * scripted Messages API) runs the tests inside its sandbox and commits, verify runs them again
 * in a fresh sandbox and passes, and the check run says so. A second issue's Attempt restores
 * the snapshot the first one kept: no setup group in its transcript.
 */

const OWNER = "demo-org";
const NAME = `env-app-${Math.random().toString(16).slice(2, 8)}`;
const REPO = `${OWNER}/${NAME}`;
const CONFIG = `environment:
  setup: npm install --no-package-lock
  verify: npm test
loops:
  claude-env:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: claude-env
    approval: none
    prompt: |
      Run the tests for #\${{ item.number }}: \${{ item.title }}
`;
const PACKAGE_JSON = `${JSON.stringify({ name: "env-app", version: "1.0.0", private: true, scripts: { test: "node --test" }, dependencies: { "@atelier-fixture/greet-lite": "^1.0.0" } }, null, 2)}\n`;
const TEST = `const { test } = require("node:test");
const assert = require("node:assert/strict");
const greet = require("@atelier-fixture/greet-lite");

test("greet-lite and shout-lite, from the registry", () => {
  assert.equal(greet("ada"), "HELLO, ADA!");
});
`;

interface PullRequest {
  number: number;
  head: { ref: string; sha: string };
}
interface CheckRun {
  name: string;
  conclusion: string | null;
  output: { title: string | null; summary: string | null };
}

async function api<T>(path: string): Promise<T> {
  const { token } = await sim<{ token: string }>("createInstallationToken", { account: OWNER });
  const res = await fetch(`${stack.simUrl}/repos/${REPO}${path}`, { headers: { authorization: `token ${token}`, accept: "application/vnd.github+json" } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** Opens an issue labeled by a writer (a trusted trigger, no approval), waits for its Run to succeed, and opens its page. */
async function runIssue(page: Page, db: pg.Pool, title: string): Promise<string> {
  const issue = await sim<{ number: number }>("createIssue", { repo: REPO, title, labels: ["ready-for-agent"], login: "octo-admin" });
  const runOf = async () => (await db.query<{ id: string }>(`SELECT id FROM runs WHERE repo = $1 AND number = $2`, [REPO, issue.number])).rows[0]?.id ?? null;
  await expect.poll(runOf, { timeout: 90_000, intervals: [1_000] }).not.toBeNull();
  const runId = (await runOf())!;
  // reloaded until it ends: the viewer's visible repositories are cached for 30 s (lib/auth/authorize.ts),
  // so a page opened just after the repository was added may still say Not found
  await expect(async () => {
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 2_000 });
  }).toPass({ timeout: 180_000, intervals: [1_000, 2_000] });
  return runId;
}

test("setup from the local registry, the real claude CLI runs the tests in its sandbox, verify passes on the check run; the next Attempt restores the snapshot", async ({ page, db }, info) => {
  test.skip(!stack.worker, "the worker (jobs/worker.ts) runs the agents");
  test.setTimeout(480_000);
  const npmrc = `registry=${stack.npmRegistryUrl}\naudit=false\nfund=false\nupdate-notifier=false\n`;
  await sim("createRepo", {
    owner: OWNER,
    name: NAME,
    files: { ".github/atelier.yml": CONFIG, "package.json": PACKAGE_JSON, ".npmrc": npmrc, ".gitignore": "node_modules/\n", "test/greet.test.js": TEST },
  });
  await sim("setUserPermission", { repo: REPO, login: "octo-admin", permission: "admin" });
  await sim("createLabel", { repo: REPO, name: "ready-for-agent", color: "0e8a16" });
  await sim("addRepository", { repo: REPO });
  await signIn(page, "octo-admin");

  // 1. the first Attempt: setup installs the packages, the agent runs the tests, verify passes
  await runIssue(page, db, "Check that the greeting works");
  const transcript = page.getByTestId("transcript");
  const setup = page.getByTestId("transcript-setup");
  await expect(setup).toHaveCount(1);
  await expect(setup).toContainText(/Setup \d+(\.\d+)? m?s/);
  await expect(setup).toContainText("added 2 packages");
  await expect(transcript).toContainText("environment: kept snapshot");
  const tool = transcript.getByTestId("transcript-tool");
  await expect(tool).toHaveCount(1);
  await tool.locator("summary").click();
  await expect(tool.getByTestId("transcript-tool-result")).toContainText("# pass 1");
  await expect(tool.getByTestId("transcript-tool-result")).toContainText("committed");
  await expect(transcript.getByTestId("transcript-final")).toContainText(CLAUDE_ENV_ANSWER);
  await expect(page.getByTestId("run-verify")).toHaveText("· the agent succeeded and verify passed");
  await expect(page.getByTestId("attempt-verify")).toContainText(/Verify npm test passed in \d+\.\d s/);
  await page.screenshot({ path: info.outputPath("environment-first-attempt.png"), fullPage: true });

  // the check run on the pull request's head says so
  await expect(async () => {
    const pulls = await api<PullRequest[]>("/pulls?state=all");
    expect(pulls).toHaveLength(1);
    const checks = await api<{ check_runs: CheckRun[] }>(`/commits/${pulls[0]!.head.sha}/check-runs`);
    const check = checks.check_runs.find((c) => c.name === "atelier / claude-env");
    expect(check?.conclusion).toBe("success");
    expect(check?.output.title).toBe("Succeeded, verify passed");
    expect(check?.output.summary).toContain("The agent succeeded and verify passed.");
  }).toPass({ timeout: 30_000, intervals: [500, 1_000] });

  // 2. the second Attempt restores the snapshot: no setup in its transcript, and it still passes
  await runIssue(page, db, "Check it again");
  await expect(transcript).toContainText(/environment restored from snapshot [0-9a-f]{12} \(\d+ files/);
  await expect(transcript).toContainText("setup skipped");
  await expect(page.getByTestId("transcript-setup")).toHaveCount(0);
  await tool.locator("summary").click();
  await expect(tool.getByTestId("transcript-tool-result")).toContainText("# pass 1");
  await expect(page.getByTestId("run-verify")).toHaveText("· the agent succeeded and verify passed");
  await page.screenshot({ path: info.outputPath("environment-second-attempt.png"), fullPage: true });
});
