import { expect, registerDemoRepo, seedItem, seedRun, signIn, test } from "./support";

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
