import { expect, sim, signIn, stack, test } from "./support";

/**
 * The whole flow in the sandbox, as a newcomer sees it: label an issue on "GitHub", its card
 * appears on the Board, approve the Run, watch the demo agent's transcript, follow the pull
 * request, see the Run succeed. It needs the worker (jobs/worker.ts): polling, the runner, the
 * executor. Without it the spec is skipped and says so.
 */

test("label an issue → its card → approve → the transcript streams → the pull request → Succeeded", async ({ page }, info) => {
  test.skip(!stack.worker, "the worker (jobs/worker.ts) is not there yet: polling and the runner cannot run");
  test.setTimeout(180_000);
  const repo = "demo-org/webapp";
  await signIn(page, "octo-admin");
  await sim("addLabels", { repo, number: 1, labels: ["ready-for-agent"], login: "octo-admin" });

  const card = page.locator('[data-testid="lane"][data-lane="Ready for agent"]').locator(`[data-item="${repo}#1"]`);
  await expect(async () => {
    await page.goto(`/board?repo=${repo}`);
    await expect(card.getByTestId("card-run-state")).toHaveText("Waiting", { timeout: 1_000 });
  }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
  await page.screenshot({ path: info.outputPath("flow-board.png"), fullPage: true });

  await card.getByTestId("card-run").click();
  await page.waitForURL(/\/runs\//);
  await page.getByTestId("action-approve").click();
  await expect(page.getByTestId("transcript-entry").first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("run-pr-link")).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.screenshot({ path: info.outputPath("flow-run.png"), fullPage: true });
});
