import { encodeStep } from "../lib/executor/adapters/step-entry";
import type { TranscriptStep } from "../lib/executor/adapters/types";
import { expect, registerDemoRepo, seedItem, seedRun, signIn, test } from "./support";

/**
 * The Run page of an Attempt whose agent's adapter read its output into steps (what the
 * executor stores for Claude Code or Codex: entries of stream "step", beside the raw lines):
 * the messages, each tool call collapsed with its input and result, the final answer; and the
 * Attempt with the model, turns and exact cost the agent reported.
 */

const REPO = "demo-org/webapp";

const STEPS: TranscriptStep[] = [
  { type: "session", sessionId: "3f1c2a9e-0000-4000-8000-000000000001", model: "claude-sonnet-4-5" },
  { type: "text", text: "I will add hello.txt." },
  { type: "tool_call", id: "toolu_1", name: "Bash", input: { command: "printf hello > hello.txt && git add hello.txt && git commit -m 'Add hello.txt'" }, inputCutBytes: 0 },
  { type: "tool_result", id: "toolu_1", name: "Bash", output: "[atelier/start-dev/906 1a2b3c4] Add hello.txt", cutBytes: 0, isError: false, exitCode: 0 },
  { type: "final", text: "Added hello.txt and committed it.", isError: false },
];

test("the Run page shows an agent's steps, each tool call collapsible, with the final answer and what the agent reported", async ({ page, db }, info) => {
  await registerDemoRepo(db, REPO);
  await seedItem(db, REPO, 906, { title: "Seeded: a real agent's steps" });
  const runId = await seedRun(db, REPO, 906, "Succeeded", { attempt: { state: "Succeeded" } });
  await db.query(
    `UPDATE attempts SET model = 'claude-sonnet-4-5', turns = 2, cost_usd = 0.4012, cost_exact = true, duration_ms = 12000,
            summary = 'Added hello.txt and committed it.' WHERE run_id = $1`,
    [runId],
  );
  const attemptId = `${runId}/agent/1`;
  // the raw line the steps were read from is kept for download, not shown twice
  await db.query(`INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, 'stdout', $3)`, [attemptId, runId, '{"type":"system","subtype":"init"}']);
  for (const step of STEPS) {
    const e = encodeStep(step);
    await db.query(`INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, $3, $4)`, [attemptId, runId, e.stream, e.text]);
  }

  await signIn(page, "octo-writer");
  await page.goto(`/runs/${runId}`);
  const transcript = page.getByTestId("transcript");
  await expect(transcript.getByText("I will add hello.txt.")).toBeVisible();
  await expect(transcript).not.toContainText('"subtype":"init"');

  const tool = transcript.getByTestId("transcript-tool");
  await expect(tool).toHaveCount(1);
  await expect(tool.locator("summary")).toContainText("Bash: printf hello > hello.txt");
  await expect(tool.locator("summary")).toContainText("done");
  // collapsed: the input and the result show once it is opened
  await expect(tool.getByTestId("transcript-tool-result")).toBeHidden();
  await tool.locator("summary").click();
  await expect(tool.getByTestId("transcript-tool-input")).toContainText("git commit -m 'Add hello.txt'");
  await expect(tool.getByTestId("transcript-tool-result")).toHaveText("[atelier/start-dev/906 1a2b3c4] Add hello.txt");
  await tool.locator("summary").click();
  await expect(tool.getByTestId("transcript-tool-result")).toBeHidden();

  await expect(transcript.getByTestId("transcript-final")).toContainText("Final answer");
  await expect(transcript.getByTestId("transcript-final")).toContainText("Added hello.txt and committed it.");

  const attempt = page.getByTestId("attempt");
  await expect(attempt.getByTestId("attempt-model")).toHaveText("· claude-sonnet-4-5");
  await expect(attempt.getByTestId("attempt-turns")).toHaveText("· 2 turns");
  await expect(attempt.getByTestId("attempt-cost")).toHaveText("· $0.4012 (exact)");
  await page.screenshot({ path: info.outputPath("agent-steps.png"), fullPage: true });
});
