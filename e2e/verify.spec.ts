import { expect, registerDemoRepo, seedItem, seedRun, signIn, sim, stack, test } from "./support";

/**
 * The Run page of a Run whose agent said it was done but broke a test: beside the state, "the
 * agent succeeded and verify failed"; on the Attempt, the command, how it ended and its last
 * lines (what the executor stores on the Attempt: lib/executor/verify-spec.ts VerifyResult).
 */

const REPO = "demo-org/webapp";

test("the Run page says verify failed, with the command, its exit and its last lines", async ({ page, db }, info) => {
  await registerDemoRepo(db, REPO);
  await seedItem(db, REPO, 941, { title: "Seeded: an agent that broke a test" });
  const runId = await seedRun(db, REPO, 941, "Succeeded", { attempt: { state: "Succeeded" } });
  const verify = {
    passed: false,
    exitCode: 1,
    timedOut: false,
    durationMs: 3_200,
    tail: "running the tests\natelier-demo/941.md:BROKEN\nFAILED: a file says BROKEN",
    command: "sh check.sh",
    rounds: 1,
  };
  await db.query(`UPDATE attempts SET summary = 'Wrote atelier-demo/941.md', verify = $2::jsonb WHERE run_id = $1`, [runId, JSON.stringify(verify)]);

  await signIn(page, "octo-writer");
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-state")).toHaveText("Succeeded");
  await expect(page.getByTestId("run-verify")).toHaveText("· the agent succeeded and verify failed");
  const attempt = page.getByTestId("attempt-verify");
  await expect(attempt).toContainText("Verify sh check.sh failed with exit code 1 after 3.2 s");
  await expect(page.getByTestId("attempt-verify-tail")).toContainText("FAILED: a file says BROKEN");
  await page.screenshot({ path: info.outputPath("verify-failed-run.png"), fullPage: true });

  // a Run whose Loop declares no verify says so
  const plain = await seedRun(db, REPO, 942, "Succeeded", { attempt: { state: "Succeeded" } });
  await page.goto(`/runs/${plain}`);
  await expect(page.getByTestId("run-verify")).toHaveText("· no verify declared");
  await expect(page.getByTestId("attempt-verify")).toHaveCount(0);
});

const CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16 }
environment:
  verify: sh check.sh
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    approval: required
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
`;
const CHECK = `#!/bin/sh
echo "running the tests"
if grep -rq BROKEN atelier-demo 2>/dev/null; then grep -r BROKEN atelier-demo; echo "FAILED: a file says BROKEN"; exit 1; fi
echo "all tests passed"
`;

interface SimSummary {
  repositories: { fullName: string; items: { kind: string; draft?: boolean; headSha?: string }[] }[];
  checkRuns: { repo: string; headSha: string; name: string; status: string; conclusion: string | null }[];
}

test("a repository that declares verify: the demo agent breaks its test, the Run says verify failed, its pull request is a draft and its check fails", async ({ page, db }, info) => {
  test.skip(!stack.worker, "the worker (jobs/worker.ts) is not there: polling and the runner cannot run");
  test.setTimeout(180_000);
  const name = `verify-${Math.random().toString(16).slice(2, 8)}`;
  const repo = `demo-org/${name}`;
  await sim("createRepo", { owner: "demo-org", name, files: { ".github/atelier.yml": CONFIG, "check.sh": CHECK } });
  await sim("setUserPermission", { repo, login: "octo-admin", permission: "admin" });
  await sim("createLabel", { repo, name: "ready-for-agent", color: "0e8a16" });
  await sim("addRepository", { repo });
  await sim("createIssue", { repo, title: "Add a widget", body: "[demo:break-test]", labels: ["ready-for-agent"], login: "octo-admin" });

  // the worker hears of the repository, reads its config and polls the labeled issue
  const runOf = async () => (await db.query<{ id: string }>(`SELECT id FROM runs WHERE repo = $1`, [repo])).rows[0]?.id ?? null;
  await expect.poll(runOf, { timeout: 90_000, intervals: [1_000] }).not.toBeNull();
  const runId = (await runOf())!;

  await signIn(page, "octo-admin");
  // the viewer's visible repositories are cached for 30 s: a page opened just after the repository was added may say Not found
  await expect(async () => {
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId("action-approve")).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
  await page.getByTestId("action-approve").click();
  await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 90_000 });
  await expect(page.getByTestId("run-verify")).toHaveText("· the agent succeeded and verify failed");
  await expect(page.getByTestId("attempt-verify-tail")).toContainText("FAILED: a file says BROKEN");
  await page.screenshot({ path: info.outputPath("verify-flow-run.png"), fullPage: true });

  await expect
    .poll(async () => {
      const state = (await (await fetch(`${stack.simUrl}/_sim/state`)).json()) as SimSummary;
      const pull = state.repositories.find((r) => r.fullName === repo)?.items.find((i) => i.kind === "pull_request");
      const check = state.checkRuns.find((c) => c.repo === repo && c.headSha === pull?.headSha && c.name === "atelier / start-dev");
      return { draft: pull?.draft ?? null, conclusion: check?.conclusion ?? null };
    }, { timeout: 30_000, intervals: [500] })
    .toEqual({ draft: true, conclusion: "failure" });
});
