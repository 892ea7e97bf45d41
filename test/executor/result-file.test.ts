import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readResultFile } from "../../lib/executor/result-file";

const dir = mkdtempSync(join(tmpdir(), "atelier-result-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileWith(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("readResultFile", () => {
  it("reads a well-formed result", async () => {
    const path = fileWith(
      "ok.json",
      JSON.stringify({ summary: "done", tokens_in: 10, tokens_out: 5, cost_usd: 0.25, pull_request: { title: "T", body: "B" } }),
    );
    expect(await readResultFile(path)).toEqual({
      tag: "Read",
      result: { summary: "done", tokens_in: 10, tokens_out: 5, cost_usd: 0.25, pull_request: { title: "T", body: "B" } },
    });
  });

  it("treats a missing file as absent", async () => {
    expect(await readResultFile(join(dir, "nope.json"))).toEqual({ tag: "Absent" });
  });

  it("ignores malformed JSON with a reason", async () => {
    const reading = await readResultFile(fileWith("bad.json", "{ nope"));
    expect(reading.tag).toBe("Ignored");
    expect(reading.tag === "Ignored" && reading.reason).toMatch(/not valid JSON/);
  });

  it("ignores a wrong shape, an unknown key or a negative count, naming the field", async () => {
    for (const [body, field] of [
      [{ tokens_in: "12" }, "tokens_in"],
      [{ tokens_out: -1 }, "tokens_out"],
      [{ cost_usd: 1, model: "x" }, "model"],
      [{ pull_request: { title: 3 } }, "pull_request.title"],
      [[1, 2], "(root)"],
    ] as const) {
      const reading = await readResultFile(fileWith("shape.json", JSON.stringify(body)));
      expect(reading.tag).toBe("Ignored");
      if (reading.tag === "Ignored") expect(reading.reason).toContain(field === "model" ? "model" : field);
    }
  });

  it("ignores a directory in place of the file", async () => {
    mkdirSync(join(dir, "a-dir"));
    expect((await readResultFile(join(dir, "a-dir"))).tag).toBe("Ignored");
  });
});
