import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SESSION_LIMITS, keepAgentSession, restoreAgentSession, SESSION_DIRS } from "../../lib/executor/agent-session";

/** A session kept from one Attempt's home for the next one of the same Run, on real directories. */

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

describe("an agent's session between the Attempts of a Run", () => {
  it("is copied out of the first Attempt's home and into the next one's", async () => {
    const root = join(dir, "ws");
    const first = home("a1");
    mkdirSync(join(first, ".claude/projects/-workspace"), { recursive: true });
    writeFileSync(join(first, ".claude/projects/-workspace/s-1.jsonl"), '{"type":"user"}\n');
    writeFileSync(join(first, ".claude.json"), "{}"); // not part of the session
    expect(await keepAgentSession(root, "run1", "claude", first)).toBeNull();
    rmSync(first, { recursive: true });

    const next = home("a2");
    expect(await restoreAgentSession(root, "run1", "claude", next, me)).toBe(true);
    expect(readFileSync(join(next, ".claude/projects/-workspace/s-1.jsonl"), "utf8")).toBe('{"type":"user"}\n');
    expect(existsSync(join(next, ".claude.json"))).toBe(false);
    // another Run has none
    expect(await restoreAgentSession(root, "run2", "claude", home("b1"), me)).toBe(false);
  });

  it("never follows a link the agent left: not for the session directory, not inside it", async () => {
    const root = join(dir, "ws");
    const secret = join(dir, "host-secret");
    mkdirSync(secret);
    writeFileSync(join(secret, "key"), "do not copy");

    const linked = home("a1");
    mkdirSync(join(linked, ".codex"));
    symlinkSync(secret, join(linked, SESSION_DIRS.codex!));
    expect(await keepAgentSession(root, "run1", "codex", linked)).toBe("the agent left no .codex/sessions in its home");

    const inside = home("a2");
    mkdirSync(join(inside, ".codex/sessions/2026"), { recursive: true });
    writeFileSync(join(inside, ".codex/sessions/2026/rollout.jsonl"), "{}\n");
    symlinkSync(join(secret, "key"), join(inside, ".codex/sessions/2026/key"));
    expect(await keepAgentSession(root, "run1", "codex", inside)).toBeNull();
    const next = home("a3");
    expect(await restoreAgentSession(root, "run1", "codex", next, me)).toBe(true);
    expect(readFileSync(join(next, ".codex/sessions/2026/rollout.jsonl"), "utf8")).toBe("{}\n");
    expect(existsSync(join(next, ".codex/sessions/2026/key"))).toBe(false);
  });

  it("a command agent keeps none", async () => {
    expect(await keepAgentSession(join(dir, "ws"), "run1", "command", home("a1"))).toBe("this kind of agent keeps no session");
  });

  it("stops at its file-count cap, without listing the rest of a huge directory, and keeps nothing", async () => {
    // the cap is set low here to prove the mechanism; three million files stop at the same count,
    // read one directory entry at a time
    const root = join(dir, "ws");
    const many = home("a1");
    const sessions = join(many, ".codex/sessions/2026");
    mkdirSync(sessions, { recursive: true });
    execFileSync("sh", ["-c", 'i=0; while [ $i -lt 500 ]; do : > "r$i.jsonl"; i=$((i+1)); done'], { cwd: sessions });
    const limits = { ...DEFAULT_SESSION_LIMITS, maxFiles: 100 };
    expect(await keepAgentSession(root, "run1", "codex", many, limits)).toBe("its session holds more than 100 files");
    expect(await restoreAgentSession(root, "run1", "codex", home("a2"), me)).toBe(false);
  });

  it("does not wait on a FIFO the agent left in its session, nor copy it", async () => {
    const root = join(dir, "ws");
    const h = home("a1");
    const sessions = join(h, ".codex/sessions");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(join(sessions, "rollout.jsonl"), "{}\n");
    execFileSync("mkfifo", [join(sessions, "pipe.jsonl")]);
    expect(await keepAgentSession(root, "run1", "codex", h)).toBeNull();
    const next = home("a2");
    expect(await restoreAgentSession(root, "run1", "codex", next, me)).toBe(true);
    expect(existsSync(join(next, ".codex/sessions/pipe.jsonl"))).toBe(false);
  });
});
