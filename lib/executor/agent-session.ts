import { createHash } from "node:crypto";
import { chown, lstat, mkdir, opendir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { AgentKind } from "./adapters/types";
import { readAgentFile } from "./agent-file";

/**
 * An agent's session, kept between the Attempts of a Run so that the next one resumes it
 * (Claude's --resume, `codex exec resume`) on whichever worker runs it (ADR 0082). The CLIs keep
 * their sessions under $HOME, and each Attempt's $HOME is its own and removed with its box: the
 * worker packs the kind's session directory out of that home into one archive — while the agent
 * runs (bounded in frequency: session-saver.ts) and after it exited — and the Run's store keeps
 * it (sealed, in Postgres); the next Attempt unpacks it into its own home before the agent starts.
 *
 * Only directories and regular files are packed (a link the agent planted is not followed, a
 * file is read as hostile input: agent-file.ts), at most `maxBytes` in `maxFiles` entries (a
 * directory is read one entry at a time, so three million files cost the worker no more than the
 * first `maxFiles` of them). An archive is unpacked as hostile input too: every path is checked
 * (no `..`, no absolute path), the size and count capped again, files created anew.
 */

/** Where each kind keeps its sessions, under $HOME. */
export const SESSION_DIRS: Readonly<Record<AgentKind, string | null>> = Object.freeze({
  claude: ".claude/projects",
  codex: ".codex/sessions",
  command: null,
});

export interface SessionLimits {
  /** A session larger than this (its files, before compression) is not kept. */
  maxBytes: number;
  /** A session of more files and directories than this is not kept. */
  maxFiles: number;
}

export const DEFAULT_SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxFiles: 10_000 });

/** A packed session: the archive (gzip of our own records) and a digest of what it holds. */
export interface PackedSession {
  archive: Buffer;
  digest: string;
}

export type PackResult = { tag: "Packed"; packed: PackedSession } | { tag: "NotKept"; reason: string };

/** The Attempt's way to the Run's kept session (the runner binds it to the Run, the Attempt and its lease). */
export interface AttemptSessions {
  /** Keeps the session (replacing the Run's last one); false when the Attempt no longer holds its lease. */
  save(session: { kind: AgentKind; sessionId: string; archive: Buffer }): Promise<boolean>;
  /** The Run's kept session; `Refused` when one is kept but does not open for this Run (altered, another Run's, another key). */
  load(): Promise<LoadedSession>;
  /** Records that this Attempt resumed the kept session (the Run page and API say so). */
  resumed(sessionId: string): Promise<void>;
}

export type LoadedSession =
  | { tag: "None" }
  | { tag: "Refused"; reason: string }
  | { tag: "Found"; kind: AgentKind; sessionId: string; archive: Buffer };

/** The path of `rel` under `base` when every component of it is a real directory (no link). */
async function realDirUnder(base: string, rel: string): Promise<string | null> {
  let path = base;
  for (const part of rel.split("/")) {
    path = join(path, part);
    const st = await lstat(path).catch(() => null);
    if (!st?.isDirectory()) return null;
  }
  return path;
}

const DIR = 0x44; // "D"
const FILE = 0x46; // "F"

type Budget = { bytes: number; files: number };

/**
 * Appends the records of the tree under `from` (paths relative to the session directory);
 * the reason it stopped when the tree is over `budget`, else null. `wholeLines`: a `.jsonl`
 * file is cut after its last complete line (the agent may be writing it right now).
 */
async function packTree(from: string, prefix: string, out: Buffer[], budget: Budget, wholeLines: boolean): Promise<string | null> {
  for await (const entry of await opendir(from)) {
    if (--budget.files < 0) return "files";
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    const src = join(from, entry.name);
    if (entry.isDirectory()) {
      out.push(record(DIR, rel, null));
      const over = await packTree(src, rel, out, budget, wholeLines);
      if (over) return over;
    } else if (entry.isFile()) {
      const file = await readAgentFile(src, Math.max(budget.bytes, 0));
      if (file.tag === "TooLarge") return "bytes";
      if (file.tag !== "Read") continue;
      let data = file.data;
      if (wholeLines && entry.name.endsWith(".jsonl")) data = data.subarray(0, data.lastIndexOf(0x0a) + 1);
      budget.bytes -= data.length;
      out.push(record(FILE, rel, data));
    }
  }
  return null;
}

function record(type: number, path: string, data: Buffer | null): Buffer {
  const name = Buffer.from(path, "utf8");
  const head = Buffer.alloc(1 + 2 + 4);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(name.length, 1);
  head.writeUInt32BE(data?.length ?? 0, 3);
  return Buffer.concat([head, name, data ?? Buffer.alloc(0)]);
}

/**
 * Packs the kind's session directory of `home`. `wholeLines` while the agent runs: each JSON
 * lines file up to its last complete line.
 */
export async function packAgentSession(
  kind: AgentKind,
  home: string,
  opts: { wholeLines?: boolean; limits?: SessionLimits } = {},
): Promise<PackResult> {
  const limits = opts.limits ?? DEFAULT_SESSION_LIMITS;
  const rel = SESSION_DIRS[kind];
  if (!rel) return { tag: "NotKept", reason: "this kind of agent keeps no session" };
  const from = await realDirUnder(home, rel);
  if (!from) return { tag: "NotKept", reason: `the agent left no ${rel} in its home` };
  const records: Buffer[] = [];
  const over = await packTree(from, "", records, { bytes: limits.maxBytes, files: limits.maxFiles }, opts.wholeLines ?? false);
  if (over === "files") return { tag: "NotKept", reason: `its session holds more than ${limits.maxFiles} files` };
  if (over === "bytes") return { tag: "NotKept", reason: `its session is larger than ${limits.maxBytes / 1024 / 1024} MB` };
  const plain = Buffer.concat(records);
  return { tag: "Packed", packed: { archive: gzipSync(plain), digest: createHash("sha256").update(plain).digest("hex") } };
}

/** A relative path of plain names: no empty, `.` or `..` component, no NUL, not absolute. */
function safePath(path: string): boolean {
  if (!path || path.includes("\0") || path.startsWith("/")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/**
 * Unpacks an archive into the kind's session directory of a new Attempt's `home`, owned by the
 * Attempt's uid when the worker switches to one; the reason it refused, else null. Nothing of a
 * refused archive is left (its directory is the caller's to remove with the box).
 */
export async function unpackAgentSession(
  archive: Buffer,
  kind: AgentKind,
  home: string,
  owner: { uid: number; switchUser: boolean },
  limits: SessionLimits = DEFAULT_SESSION_LIMITS,
): Promise<string | null> {
  const rel = SESSION_DIRS[kind];
  if (!rel) return "this kind of agent keeps no session";
  let plain: Buffer;
  try {
    // the size the pack allowed, plus each record's head and name: a larger stream is refused unread
    plain = gunzipSync(archive, { maxOutputLength: limits.maxBytes + limits.maxFiles * (7 + 65_535) });
  } catch {
    return "the kept session is not a readable archive";
  }
  const uid = owner.switchUser ? owner.uid : null;
  const own = async (path: string) => {
    if (uid !== null) await chown(path, uid, uid);
  };
  // the directories between home and the session directory belong to the agent too
  let root = home;
  for (const part of rel.split("/")) {
    root = join(root, part);
    await mkdir(root, { recursive: true, mode: 0o700 });
    await own(root);
  }
  let at = 0;
  let files = 0;
  let bytes = 0;
  while (at < plain.length) {
    if (plain.length - at < 7) return "the kept session is cut short";
    const type = plain.readUInt8(at);
    const nameLength = plain.readUInt16BE(at + 1);
    const dataLength = plain.readUInt32BE(at + 3);
    const end = at + 7 + nameLength + dataLength;
    if (end > plain.length) return "the kept session is cut short";
    const path = plain.subarray(at + 7, at + 7 + nameLength).toString("utf8");
    if (!safePath(path)) return "the kept session names a path outside its directory";
    if (++files > limits.maxFiles || (bytes += dataLength) > limits.maxBytes) return "the kept session is over its caps";
    const target = join(root, ...path.split("/"));
    if (type === DIR) {
      await mkdir(target, { mode: 0o700 });
      await own(target);
    } else if (type === FILE) {
      // flag wx: a name already there (a second record of it) is refused, nothing is followed
      await writeFile(target, plain.subarray(at + 7 + nameLength, end), { mode: 0o600, flag: "wx" });
      await own(target);
    } else {
      return "the kept session holds a record of an unknown type";
    }
    at = end;
  }
  return null;
}
