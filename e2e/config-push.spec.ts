import { DEMO_CONFIG } from "../lib/sandbox/seed";
import { expect, sim, signIn, test } from "./support";

// A change to .github/atelier.yml takes effect in seconds: the simulator sends `push`, the
// dashboard's webhook asks for a poll now, the worker reads the file again. A file that does
// not parse keeps its Loop listed, in an error state with the reason; fixed, it is active again.
const REPO = "demo-org/api";
const BROKEN = "loops:\n  start-dev: [unclosed\n";

test("a config pushed broken, then fixed: the Loop shows the error, then clears it, each within 10 s", async ({ page }) => {
  await signIn(page, "octo-admin");
  const loop = page.locator('[data-testid="loop"][data-loop="start-dev"]').filter({ hasText: REPO });
  const state = loop.getByTestId("loop-state");
  const reloadUntil = async (check: () => Promise<void>, timeout: number) =>
    expect(async () => {
      await page.goto("/loops");
      await check();
    }).toPass({ timeout, intervals: [500] });

  // the worker registers the demo installation and reads its configs on its own
  await reloadUntil(() => expect(state).toHaveText("active", { timeout: 1_000 }), 90_000);

  await sim("pushCommit", { repo: REPO, branch: "main", files: { ".github/atelier.yml": BROKEN }, message: "Break the config", login: "octo-admin" });
  await reloadUntil(async () => {
    await expect(state).toHaveText("error", { timeout: 1_000 });
    await expect(loop).toContainText("The YAML does not parse");
  }, 10_000);

  await sim("pushCommit", { repo: REPO, branch: "main", files: { ".github/atelier.yml": DEMO_CONFIG }, message: "Fix the config", login: "octo-admin" });
  await reloadUntil(async () => {
    await expect(state).toHaveText("active", { timeout: 1_000 });
    await expect(loop).not.toContainText("does not parse");
  }, 10_000);
});
