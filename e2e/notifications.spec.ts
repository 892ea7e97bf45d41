import { startReceiver, type Receiver } from "../test/outbound/receiver";
import { slackMessageProblems } from "../test/outbound/slack-limits";
import { expect, registerDemoRepo, signIn, test } from "./support";

/**
 * The Webhook deliveries page in Chromium: a repository's admin adds a Slack target for a Loop,
 * presses "Send a test", and a Slack-shaped receiver on loopback gets a Block Kit message Slack
 * would take; the delivery log shows it delivered; then changes the notices it is subscribed to.
 */

let slack: Receiver;
test.beforeAll(async () => {
  slack = await startReceiver(() => "", [200]);
});
test.afterAll(async () => {
  await slack?.close();
});

test("a Slack target's test delivery reaches it from the button, and the log shows it", async ({ page, db }) => {
  await registerDemoRepo(db);
  await signIn(page, "octo-admin");
  await page.goto("/deliveries");
  const form = page.getByTestId("hook-form");
  await form.getByRole("combobox", { name: /^For/ }).selectOption("loop");
  await form.getByRole("textbox", { name: "Repository" }).fill("demo-org/webapp");
  await form.getByRole("textbox", { name: "Loop" }).fill("start-dev");
  await form.getByRole("combobox", { name: /^Kind/ }).selectOption("slack");
  await form.getByRole("textbox", { name: "URL" }).fill(slack.url);
  await form.getByRole("button", { name: "Add target" }).click();

  const target = page.getByTestId("hook").filter({ hasText: "Slack" }).filter({ hasText: `127.0.0.1:${slack.port}` });
  await expect(target).toHaveCount(1);
  await expect(target).not.toContainText("/hooks/atelier"); // the URL is its credential: masked
  await target.getByTestId("test-delivery").click();

  await expect.poll(() => slack.received.length).toBe(1);
  const message = JSON.parse(slack.received[0]!.body) as { blocks: { text?: { text: string } }[] };
  expect(slackMessageProblems(message)).toEqual([]);
  expect(message.blocks[0]!.text!.text).toBe("Test delivery");
  await expect(page.getByTestId("delivery").filter({ hasText: "notice.test" }).first()).toHaveAttribute("data-status", "delivered");

  // its notices changed after it was made: no more failures, verify's instead
  await expect(target).toContainText("needs approval, run failed");
  await target.getByText("Change its notices").click();
  const events = target.getByTestId("hook-events-form");
  await events.getByRole("checkbox", { name: "Run failed" }).uncheck();
  await events.getByRole("checkbox", { name: "Verify failed" }).check();
  await events.getByRole("button", { name: "Save notices" }).click();
  await expect(target).toContainText("needs approval, verify failed");
});
