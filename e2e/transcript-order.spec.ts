import { expect, registerDemoRepo, seedItem, seedRun, signIn, test } from "./support";

/**
 * A transcript whose entry ids cross a power of ten (where their text order is not their
 * order): the Run page shows every entry, in order, live and after a reload.
 */

const REPO = "demo-org/webapp";

test("a transcript of 17 entries shows 17, in order, and again after a reload", async ({ page, db }) => {
  await registerDemoRepo(db, REPO);
  await seedItem(db, REPO, 907, { title: "Seeded: seventeen lines" });
  const runId = await seedRun(db, REPO, 907, "Succeeded", { attempt: { state: "Succeeded" } });
  const base = 10_000_000 - 8;
  await db.query(
    `INSERT INTO transcript_entries (id, attempt_id, run_id, stream, text)
     SELECT $1::bigint + i - 1, $2, $3, 'stdout', 'line ' || i FROM generate_series(1, 17) AS i`,
    [base, `${runId}/agent/1`, runId],
  );
  const lines = Array.from({ length: 17 }, (_, i) => `line ${i + 1}`);

  await signIn(page, "octo-writer");
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("transcript-status")).toHaveAttribute("data-status", "ended");
  await expect(page.getByTestId("transcript-entry")).toHaveText(lines);
  await page.reload();
  await expect(page.getByTestId("transcript-status")).toHaveAttribute("data-status", "ended");
  await expect(page.getByTestId("transcript-entry")).toHaveText(lines);
});
