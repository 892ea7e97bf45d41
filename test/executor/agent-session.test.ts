import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SESSION_LIMITS, packAgentSession, SESSION_DIRS, unpackAgentSession } from "../../lib/executor/agent-session";

/** A session packed out of one Attempt's home and unpacked into the next one's, on real directories. */

let dir: string;
const me = { uid: process.getuid?.() ?? 0, switchUser: false };
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "atelier-session-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function home(name: string): string {
  const h = join(dir, name);
  mkdirSync(h, { recursive: true });
  return h;
}

async function packed(kind: "claude" | "codex", h: string, opts: Parameters<typeof packAgentSession>[2] = {}): Promise<Buffer> {
  const result = await packAgentSession(kind, h, opts);
  if (result.tag !== "Packed") throw new Error(result.reason);
  return result.packed.archive;
}

/** An archive of our own records, as a hostile one would be written. */
function archiveOf(records: { type: "D" | "F"; path: string; data?: string }[]): Buffer {
  return gzipSync(
    Buffer.concat(
      records.map((r) => {
        const name = Buffer.from(r.path);
        const data = Buffer.from(r.data ?? "");
        const head = Buffer.alloc(7);
        head.writeUInt8(r.type.charCodeAt(0), 0);
        head.writeUInt16BE(name.length, 1);
        head.writeUInt32BE(data.length, 3);
        return Buffer.concat([head, name, data]);
      }),
    ),
  );
}

describe("an agent's session between the Attempts of a Run", () => {
  it("is packed out of the first Attempt's home and unpacked into the next one's", async () => {
    const first = home("a1");
    mkdirSync(join(first, ".claude/projects/-workspace"), { recursive: true });
    writeFileSync(join(first, ".claude/projects/-workspace/s-1.jsonl"), '{"type":"user"}\n');
    writeFileSync(join(first, ".claude.json"), "{}"); // not part of the session
    const archive = await packed("claude", first);

    const next = home("a2");
    expect(await unpackAgentSession(archive, "claude", next, me)).toBeNull();
    expect(readFileSync(join(next, ".claude/projects/-workspace/s-1.jsonl"), "utf8")).toBe('{"type":"user"}\n');
    expect(existsSync(join(next, ".claude.json"))).toBe(false);
  });

  it("while the agent writes, keeps each JSON lines file up to its last complete line", async () => {
    const h = home("a1");
    mkdirSync(join(h, ".codex/sessions"), { recursive: true });
    writeFileSync(join(h, ".codex/sessions/rollout.jsonl"), '{"a":1}\n{"b":');
    const next = home("a2");
    expect(await unpackAgentSession(await packed("codex", h, { wholeLines: true }), "codex", next, me)).toBeNull();
    expect(readFileSync(join(next, ".codex/sessions/rollout.jsonl"), "utf8")).toBe('{"a":1}\n');
  });

  it("never follows a link the agent left: not for the session directory, not inside it", async () => {
    const secret = join(dir, "host-secret");
    mkdirSync(secret);
    writeFileSync(join(secret, "key"), "do not copy");

    const linked = home("a1");
    mkdirSync(join(linked, ".codex"));
    symlinkSync(secret, join(linked, SESSION_DIRS.codex!));
    expect(await packAgentSession("codex", linked)).toEqual({ tag: "NotKept", reason: "the agent left no .codex/sessions in its home" });

    const inside = home("a2");
    mkdirSync(join(inside, ".codex/sessions/2026"), { recursive: true });
    writeFileSync(join(inside, ".codex/sessions/2026/rollout.jsonl"), "{}\n");
    symlinkSync(join(secret, "key"), join(inside, ".codex/sessions/2026/key"));
    const next = home("a3");
    expect(await unpackAgentSession(await packed("codex", inside), "codex", next, me)).toBeNull();
    expect(readFileSync(join(next, ".codex/sessions/2026/rollout.jsonl"), "utf8")).toBe("{}\n");
    expect(existsSync(join(next, ".codex/sessions/2026/key"))).toBe(false);
  });

  it("a command agent keeps none", async () => {
    expect(await packAgentSession("command", home("a1"))).toEqual({ tag: "NotKept", reason: "this kind of agent keeps no session" });
  });

  it("stops at its file-count cap, without listing the rest of a huge directory, and keeps nothing", async () => {
    // the cap is set low here to prove the mechanism; three million files stop at the same count,
    // read one directory entry at a time
    const many = home("a1");
    const sessions = join(many, ".codex/sessions/2026");
    mkdirSync(sessions, { recursive: true });
    execFileSync("sh", ["-c", 'i=0; while [ $i -lt 500 ]; do : > "r$i.jsonl"; i=$((i+1)); done'], { cwd: sessions });
    const limits = { ...DEFAULT_SESSION_LIMITS, maxFiles: 100 };
    expect(await packAgentSession("codex", many, { limits })).toEqual({ tag: "NotKept", reason: "its session holds more than 100 files" });
  });

  it("does not wait on a FIFO the agent left in its session, nor pack it", async () => {
    const h = home("a1");
    const sessions = join(h, ".codex/sessions");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(join(sessions, "rollout.jsonl"), "{}\n");
    execFileSync("mkfifo", [join(sessions, "pipe.jsonl")]);
    const next = home("a2");
    expect(await unpackAgentSession(await packed("codex", h), "codex", next, me)).toBeNull();
    expect(existsSync(join(next, ".codex/sessions/pipe.jsonl"))).toBe(false);
  });

  it("refuses a hostile archive: a path out of its directory, a second record of a name, garbage, a bomb over the caps", async () => {
    const target = home("victim");
    const escape = archiveOf([{ type: "F", path: "../../../victim/owned", data: "x" }]);
    expect(await unpackAgentSession(escape, "codex", home("a1"), me)).toBe("the kept session names a path outside its directory");
    expect(existsSync(join(target, "owned"))).toBe(false);
    expect(await unpackAgentSession(archiveOf([{ type: "F", path: "/etc/passwd", data: "x" }]), "codex", home("a2"), me)).toBe("the kept session names a path outside its directory");
    await expect(unpackAgentSession(archiveOf([{ type: "F", path: "a.jsonl" }, { type: "F", path: "a.jsonl" }]), "codex", home("a3"), me)).rejects.toMatchObject({ code: "EEXIST" });
    expect(await unpackAgentSession(Buffer.from("not gzip at all"), "codex", home("a4"), me)).toBe("the kept session is not a readable archive");
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024));
    expect(await unpackAgentSession(bomb, "codex", home("a5"), me, { maxBytes: 1024, maxFiles: 1 })).toBe("the kept session is not a readable archive");
  });
});
