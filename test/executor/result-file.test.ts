import { execFileSync } from "node:child_process";
import { linkSync, mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
      [{ cost_usd: 1, model: "x" }, "unknown field"],
      [{ pull_request: { title: 3 } }, "pull_request.title"],
      [[1, 2], "(root)"],
    ] as const) {
      const reading = await readResultFile(fileWith("shape.json", JSON.stringify(body)));
      expect(reading.tag).toBe("Ignored");
      if (reading.tag === "Ignored") expect(reading.reason).toContain(field);
    }
  });

  it("ignores a directory in place of the file", async () => {
    mkdirSync(join(dir, "a-dir"));
    expect((await readResultFile(join(dir, "a-dir"))).tag).toBe("Ignored");
  });
});

/**
 * The agent chooses what lies at the result file's path. Played by the attacker: a link to
 * /proc/kmsg (a "regular" file that never ends: read through, it held a libuv thread for good),
 * a FIFO nobody writes (an open that waits for a writer), and links to a secret of the host's —
 * read through, a JSON parse error quoted its first characters into the transcript.
 */
describe("readResultFile, given a hostile file", () => {
  const SECRET = "GITHUB_WEBHOOK_SECRET=whsec_hostile_0123456789abcdef";
  const secretFile = fileWith(".env", `${SECRET}\n`);

  it("does not follow a link to /proc/kmsg, and does not wait", async () => {
    const path = join(dir, "kmsg.json");
    symlinkSync("/proc/kmsg", path);
    expect(await readResultFile(path)).toEqual({ tag: "Ignored", reason: "it is a symbolic link" });
  });

  it("does not wait on a FIFO, whether it is the file or a link's target", async () => {
    const fifo = join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    expect(await readResultFile(fifo)).toEqual({ tag: "Ignored", reason: "it is not a regular file" });
    const link = join(dir, "to-fifo.json");
    symlinkSync(fifo, link);
    expect(await readResultFile(link)).toEqual({ tag: "Ignored", reason: "it is a symbolic link" });
  });

  it("reads nothing of a host file it is linked to: no text of it in the reason", async () => {
    const link = join(dir, "to-env.json");
    symlinkSync(secretFile, link);
    const soft = await readResultFile(link);
    expect(soft).toEqual({ tag: "Ignored", reason: "it is a symbolic link" });
    const hard = join(dir, "hard-env.json");
    linkSync(secretFile, hard);
    const reading = await readResultFile(hard);
    expect(reading).toEqual({ tag: "Ignored", reason: "it is a hard link to another file" });
  });

  it("quotes none of its own text when it is not JSON, nor a key it made up", async () => {
    const notJson = await readResultFile(fileWith("env-copy.json", SECRET));
    expect(notJson).toEqual({ tag: "Ignored", reason: "it is not valid JSON" });
    const madeUp = await readResultFile(fileWith("key.json", JSON.stringify({ [SECRET]: 1, pull_request: { [SECRET]: "x" } })));
    expect(madeUp.tag).toBe("Ignored");
    expect(JSON.stringify(madeUp)).not.toContain("whsec");
  });
});

