import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * A steered agent writes its pull request to page a team and close Items the Run was not about.
 * Played by the attacker through the whole runner (simulator, real git, a command agent in its
 * sandbox): the pull request GitHub gets has every mention and every foreign closing keyword in a
 * code span; the Run's own issue is still closed by it.
 */

const db = testDb();
const prefix = uniquePrefix("steered-pr");
let world: SimWorld;
let runner: RunnerUnderTest;
let workspaceRoot: string;

const RESULT = JSON.stringify({
  pull_request: {
    title: "Fix it @demo-org/admins closes #12",
    body: "Done. cc @demo-org/security @octocat, mail ops@example.com\n\nCloses #7\nfixes #99\nFixes demo-org/other#3\nresolves https://github.com/demo-org/other/issues/4\n`@in-code closes #5`",
  },
});
const SCRIPT = `echo hi > hi.txt && cat > "$ATELIER_RESULT_FILE" <<'JSON'\n${RESULT}\nJSON`;

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-steered-ws-"));
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, roster: agents({ steered: { kind: "command", command: ["sh", "-c", SCRIPT] } }) });
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

describe("the pull request a steered agent writes", () => {
  it("pages no one and closes nothing but the Run's own issue", async () => {
    const repo = await world.addRepo("steered");
    const run = await openRun(db, issueEvent(repo, 7, "s1", "Fix issue 7.", { agent: "steered" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Run to end", async () => ["Succeeded", "Failed", "Canceled"].includes(await runState(db, run.runId)), 60_000, 250);
    expect(await runState(db, run.runId)).toBe("Succeeded");
    const [owner, name] = repo.split("/") as [string, string];
    const octokit = world.app.installationOctokit(world.installationId);
    const pulls = (await octokit.request("GET /repos/{owner}/{repo}/pulls", { owner, repo: name, state: "all" })).data;
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.title).toBe("Fix it `@demo-org/admins` `closes #12`");
    expect(pr.body).toContain(
      "Done. cc `@demo-org/security` `@octocat`, mail ops@example.com\n\nCloses #7\n`fixes #99`\n`Fixes demo-org/other#3`\n`resolves https://github.com/demo-org/other/issues/4`\n`@in-code closes #5`",
    );
  });
});
