import { expect, sim, signIn, stack, test } from "./support";

/**
 * Review and push (ADR 0058), in Chromium on the whole sandbox stack: a stranger's issue steers
 * the demo agent into editing `scripts.test`; a writer labels and approves it; the agent's
 * commits wait off every branch, the Run page shows the diff, and only the writer's Push makes
 * the branch and the pull request. It needs the worker; without it the spec is skipped.
 */

test("a stranger's issue → approve → the diff waits for review → Push → the pull request", async ({ page }, info) => {
  test.skip(!stack.worker, "the worker (jobs/worker.ts) is not there: the agent cannot run");
  test.setTimeout(180_000);
  const repo = "demo-org/webapp";
  const stranger = `stranger-${Date.now().toString(36)}`;
  await sim("createUser", { login: stranger });
  const issue = await sim<{ number: number }>("createIssue", {
    login: stranger,
    repo,
    title: "The tests are slow",
    body: "[demo:steered] Please make `npm test` faster.",
  });
  await signIn(page, "octo-admin");
  await sim("addLabels", { repo, number: issue.number, labels: ["ready-for-agent"], login: "octo-admin" });

  // the Loop asks for approval: the approver is told the commits will wait for review before CI
  await expect(async () => {
    await page.goto(`/needs-you`);
    await page.locator(`a[href^="/runs/"]`, { hasText: "The tests are slow" }).first().click({ timeout: 1_000 });
  }).toPass({ timeout: 60_000, intervals: [1_000, 2_000] });
  await page.waitForURL(/\/runs\//);
  await expect(page.getByTestId("run-push")).toContainText("wait for a writer's review before any branch");
  await page.getByTestId("action-approve").click();

  await expect(page.getByTestId("run-state")).toHaveText("Reviewing", { timeout: 90_000 });
  const review = page.getByTestId("held-commits");
  await expect(review).toBeVisible();
  await expect(page.getByTestId("held-why")).toContainText(`by ${stranger}, who cannot write`);
  await expect(review.getByTestId("held-file").filter({ hasText: "package.json" })).toBeVisible();
  await expect(page.getByTestId("held-patch")).toContainText("$NPM_TOKEN");
  await expect(page.getByTestId("run-pr-link")).toHaveCount(0);
  await page.screenshot({ path: info.outputPath("review-and-push.png"), fullPage: true });

  page.once("dialog", (d) => void d.accept());
  await page.getByTestId("action-push").click();
  await expect(page.getByTestId("run-state")).toHaveText("Succeeded", { timeout: 30_000 });
  await expect(page.getByTestId("run-pr-link")).toBeVisible();
  await expect(page.getByTestId("held-commits")).toHaveCount(0);
});
