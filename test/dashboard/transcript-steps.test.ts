import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { groupTranscript, toolTitle, type StoredEntry } from "../../lib/dashboard/transcript-steps";
import { ClaudeStreamParser, type TranscriptStep } from "../../lib/executor/adapters";
import { decodeStep, encodeStep } from "../../lib/executor/adapters/step-entry";

const recorded = readFileSync(new URL("../executor/adapters/fixtures/claude-commit.jsonl", import.meta.url), "utf8");

function stored(items: { stream: string; text: string }[], attemptId = "a1"): StoredEntry[] {
  const t0 = Date.parse("2026-12-01T10:00:00.000Z");
  return items.map((e, i) => ({ id: String(i + 1), attemptId, ...e, at: new Date(t0 + i * 1000).toISOString() }));
}

describe("groupTranscript", () => {
  it("shows a recorded Claude run as steps: each tool with its input, result and duration; the raw lines are for download", () => {
    const p = new ClaudeStreamParser({ name: "claude", maxTurns: null, maxBudgetUsd: null });
    const steps = [...p.feed(recorded), ...p.end({ code: 0, signal: null }).steps];
    const entries = stored([
      { stream: "system", text: "starting agent claude" },
      ...recorded.trim().split("\n").map((text) => ({ stream: "stdout", text })),
      ...steps.map(encodeStep),
    ]);
    const view = groupTranscript(entries);
    // the last message is the final answer, shown once
    expect(view.map((s) => s.kind)).toEqual(["lines", "session", "message", "tool", "final"]);
    expect(view[0]).toMatchObject({ kind: "lines", lines: [{ stream: "system", text: "starting agent claude" }] });
    const tool = view[3] as Extract<(typeof view)[number], { kind: "tool" }>;
    expect(tool.name).toBe("Bash");
    expect(tool.title).toMatch(/^Bash: printf 'hello\\n' > hello.txt && git add/);
    expect(tool.result).toMatchObject({ isError: false, output: "committed" });
    expect(tool.durationMs).toBe(1000);
    expect(view.at(-1)).toMatchObject({ kind: "final", text: "Added hello.txt and committed it.", isError: false });
  });

  it("a command agent's plain lines are one block with its duration", () => {
    const view = groupTranscript(stored([{ stream: "stdout", text: "one\ntwo\n" }, { stream: "stderr", text: "warn" }]));
    expect(view).toEqual([
      {
        kind: "lines",
        id: "1",
        at: "2026-12-01T10:00:00.000Z",
        endedAt: "2026-12-01T10:00:01.000Z",
        durationMs: 1000,
        lines: [
          { stream: "stdout", text: "one" },
          { stream: "stdout", text: "two" },
          { stream: "stderr", text: "warn" },
        ],
      },
    ]);
  });

  it("a tool still running has no result; a result without its call still shows; malformed step entries are skipped", () => {
    const call: TranscriptStep = { type: "tool_call", id: "t1", name: "exec", input: { command: "sleep 9" }, inputCutBytes: 0 };
    const orphan: TranscriptStep = { type: "tool_result", id: "t9", name: null, output: "x", cutBytes: 0, isError: true, exitCode: 1 };
    const view = groupTranscript(stored([encodeStep(call), { stream: "step", text: "{not json" }, encodeStep(orphan)]));
    expect(view).toMatchObject([
      { kind: "tool", name: "exec", title: "exec: sleep 9", result: null, durationMs: null },
      { kind: "tool", name: "tool", result: { isError: true, exitCode: 1 } },
    ]);
  });
});

describe("step entries", () => {
  it("round-trip, and refuse what is not a step", () => {
    const step: TranscriptStep = { type: "retry", status: 529, message: "overloaded", attempt: 1, maxRetries: 2, delayMs: 500 };
    expect(decodeStep(encodeStep(step))).toEqual(step);
    expect(decodeStep({ stream: "stdout", text: JSON.stringify(step) })).toBeNull();
    expect(decodeStep({ stream: "step", text: '{"type":"nope"}' })).toBeNull();
  });

  it("toolTitle gives the gist of an input, on one line, bounded", () => {
    expect(toolTitle("Read", { file_path: "/a/b.ts" })).toBe("Read: /a/b.ts");
    expect(toolTitle("exec", { command: "ls\n-la" })).toBe("exec: ls -la");
    expect(toolTitle("Write", { content: "x".repeat(500) }).length).toBe(120);
    expect(toolTitle("Todo", null)).toBe("Todo");
  });
});

describe("setup's output", () => {
  it("is a group of its own, with its duration, between Atelier's lines", () => {
    const steps = groupTranscript([
      { id: "1", stream: "system", text: "setup: running in the sandbox", at: "2026-12-06T10:00:00.000Z" },
      { id: "2", stream: "setup", text: "added 2 packages\n", at: "2026-12-06T10:00:01.000Z" },
      { id: "3", stream: "setup", text: "done", at: "2026-12-06T10:00:04.500Z" },
      { id: "4", stream: "system", text: "setup passed in 3.5 s", at: "2026-12-06T10:00:04.600Z" },
    ]);
    expect(steps.map((s) => (s.kind === "lines" ? [s.group ?? null, s.lines.map((l) => l.text), s.durationMs] : s.kind))).toEqual([
      [null, ["setup: running in the sandbox"], 0],
      ["setup", ["added 2 packages", "done"], 4_600],
      [null, ["setup passed in 3.5 s"], 0],
    ]);
  });

  it("lasts from Atelier's line before it to the line after it, however few lines setup printed", () => {
    const steps = groupTranscript([
      { id: "1", stream: "system", text: "setup: running in the sandbox", at: "2026-12-06T10:00:00.000Z" },
      { id: "2", stream: "setup", text: "added 1 package in 697ms\n", at: "2026-12-06T10:00:02.000Z" },
      { id: "3", stream: "system", text: "setup passed in 2.3 s", at: "2026-12-06T10:00:02.300Z" },
      { id: "4", stream: "system", text: "running agent demo", at: "2026-12-06T10:00:09.000Z" },
    ]);
    const group = steps.find((s) => s.kind === "lines" && s.group === "setup");
    expect(group?.kind === "lines" ? [group.durationMs, group.endedAt] : null).toEqual([2_300, "2026-12-06T10:00:02.300Z"]);
  });
});
