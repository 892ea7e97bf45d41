import { expect, registerDemoRepo, seedItem, seedRun, signIn, test } from "./support";

/**
 * The Run page of a Run whose first Attempt was interrupted (its worker died or was drained) and
 * whose second resumed the agent's kept session (ADR 0082, 0083): the first says it was
 * interrupted and that its session was kept, the second that it resumed it. The Attempts are
 * written as the statements that close and resume them write them
 * (test/runner/interrupted-session.test.ts makes them with the real CLI).
 */

const REPO = "demo-org/webapp";
const SESSION = "3f1c2a9e-0000-4000-8000-00000000e2e1";

test("the Run page says an Attempt was interrupted and the next one resumed its session", async ({ page, db }, info) => {
  await registerDemoRepo(db, REPO);
  await seedItem(db, REPO, 907, { title: "Seeded: an interrupted agent" });
  const runId = await seedRun(db, REPO, 907, "Succeeded", {
    attempt: {
      state: "Failed",
      failureKind: "InfraFailure",
      failureCategory: "lease_lost",
      message: "The worker running this Attempt (worker-a) was drained (a deploy or a restart) and the Attempt outlived the drain: it stopped the agent, kept its session and handed the Attempt over, to be resumed.",
    },
  });
  await db.query(`UPDATE attempts SET session_id = $1, retryable = true WHERE id = $2`, [SESSION, `${runId}/agent/1`]);
  await db.query(
    `INSERT INTO attempts (id, run_id, number, state, ended_at, agent, resumed_session, summary) VALUES ($1, $2, 2, 'Succeeded', now(), 'demo', $3, 'Picked the task up where it was left.')`,
    [`${runId}/agent/2`, runId, SESSION],
  );

  await signIn(page, "octo-writer");
  await page.goto(`/runs/${runId}`);
  const attempts = page.getByTestId("attempt");
  await expect(attempts).toHaveCount(2);
  await expect(attempts.nth(0).getByTestId("attempt-interrupted")).toHaveText(`Interrupted: its agent's session ${SESSION} was kept for the next Attempt.`);
  await expect(attempts.nth(0)).toContainText("was drained");
  await expect(attempts.nth(1).getByTestId("attempt-resumed")).toHaveText(`Resumed the agent's session ${SESSION} of interrupted Attempt #1.`);

  const api = await page.request.get(`/api/v1/runs/${runId}`);
  expect(api.status()).toBe(200);
  const body = (await api.json()) as { attempts: { interrupted: boolean; resumedSession: string | null; resumedInterrupted: boolean }[] };
  expect(body.attempts.map((a) => [a.interrupted, a.resumedSession, a.resumedInterrupted])).toEqual([
    [true, null, false],
    [false, SESSION, true],
  ]);
  await page.screenshot({ path: info.outputPath("interrupted.png"), fullPage: true });
});
