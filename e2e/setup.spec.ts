import { expect, test } from "@playwright/test";

test("without the setup token the setup page offers nothing to an outsider", async ({ page }) => {
  const base = process.env.E2E_SETUP_URL!;
  await page.goto(`${base}/setup`);
  await expect(page.getByTestId("setup-refused")).toContainText("printed when it started");
  await expect(page.getByText("setup_token_required")).toBeVisible();
  await expect(page.getByTestId("setup-register")).toHaveCount(0);
  await page.goto(`${base}/setup?token=guessed`);
  await expect(page.getByTestId("setup-register")).toHaveCount(0);
});

test("the setup page registers Atelier's GitHub App from its manifest and shows where to install it; the key is never shown", async ({ page }) => {
  const base = process.env.E2E_SETUP_URL!;
  await page.goto(`${base}/setup?token=${process.env.E2E_SETUP_TOKEN}`);
  await expect(page.getByRole("heading", { name: "Register Atelier on GitHub" })).toBeVisible();
  await page.locator('input[name="github"][value="enterprise"]').check();
  await expect(page.locator('input[name="enterpriseUrl"]')).toHaveValue(process.env.E2E_SETUP_SIM_URL!);
  await page.locator('input[name="name"]').fill("Atelier E2E");
  await page.getByTestId("setup-register").click();

  // a GitHub Enterprise Server's host is shown before the manifest goes there
  const host = new URL(process.env.E2E_SETUP_SIM_URL!).host;
  await expect(page.locator("strong[data-host]")).toHaveText(host);
  await page.getByRole("button", { name: `Continue to ${host}` }).click();

  // GitHub creates the App and sends the browser back
  await expect(page.getByRole("heading", { name: "The GitHub App is registered" })).toBeVisible();
  await expect(page.getByTestId("setup-install")).toHaveAttribute("href", /\/installations\/new$/);
  expect(await page.content()).not.toContain("PRIVATE KEY");

  // from now on the page shows the App, not the form
  await page.goto(`${base}/setup`);
  await expect(page.getByTestId("setup-install")).toBeVisible();
  await expect(page.getByTestId("setup-register")).toHaveCount(0);
});
