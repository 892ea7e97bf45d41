import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, signIn, test } from "./support";

// Every dashboard page, signed in as an admin (who sees every page), and the sign-in page:
// axe finds no serious or critical violation (contrast, names, labels, landmarks, skip link).
const PAGES = ["/board", "/needs-you", "/runs", "/loops", "/repositories", "/budgets", "/audit", "/usage", "/insights", "/deliveries", "/workers", "/tokens", "/runs/0000000000000000000000000000dead"];

async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join(", ")}`);
}

test("the sign-in page has no serious or critical accessibility violation", async ({ page }) => {
  await page.goto("/signin");
  expect(await seriousViolations(page)).toEqual([]);
});

test("every dashboard page has no serious or critical accessibility violation, and a skip link to its content", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, "octo-admin");
  for (const path of PAGES) {
    await page.goto(path);
    await expect(page.locator("main")).toBeVisible();
    expect(await seriousViolations(page), path).toEqual([]);
  }
  await page.goto("/board");
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to the content" });
  await expect(skip).toBeFocused();
  await skip.press("Enter");
  await expect(page.locator("main#main")).toBeFocused();
});
