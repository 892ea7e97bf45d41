import { createHash } from "node:crypto";
import { chmod, chown, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { insideUid, SANDBOX_HOME, type SandboxIdentity } from "./bwrap-args";

/**
 * An Attempt's box: the directories its sandbox is given, and the host uid that owns them.
 *
 *   <attempt dir>/box/worktree   the private clone (the agent's cwd, read-write)
 *   <attempt dir>/box/home       a $HOME made for this Attempt
 *   <attempt dir>/box/tmp        its $TMPDIR
 *   <attempt dir>/box/out        where the agent writes its result file
 *   <attempt dir>/box/run        the egress gateway's sockets (owned by the worker)
 *   <attempt dir>/box/etc        made-up passwd, group and hosts
 *
 * When the worker runs as root, each Attempt gets a uid of its own from a range no account
 * uses, so no two Attempts (and no Attempt and the worker) share an owner; otherwise the box
 * belongs to the worker's uid and the sandbox's namespaces are the only wall.
 */

export const UID_BASE = 200_000;
export const UID_SPAN = 65_536;

export interface AttemptBox {
  dir: string;
  worktree: string;
  home: string;
  tmp: string;
  out: string;
  run: string;
  etc: string;
  /** The host uid (and gid) the sandbox runs as. */
  uid: number;
  /** Whether the worker switches to `uid` (it runs as root). */
  switchUser: boolean;
  identity: SandboxIdentity;
}

/**
 * The host uid for an Attempt: root picks one of its own per Attempt, anyone else keeps theirs;
 * an unconfined agent (sandbox: off) runs as the worker.
 */
export function boxUid(name: string, sandboxed = true): { uid: number; switchUser: boolean; identity: SandboxIdentity } {
  const self = process.getuid?.() ?? 0;
  if (self !== 0 || !sandboxed) return { uid: self, switchUser: false, identity: { privileged: false } };
  const n = createHash("sha256").update(name).digest().readUInt32BE(0);
  const uid = UID_BASE + (n % UID_SPAN);
  return { uid, switchUser: true, identity: { privileged: true, uid } };
}

export function boxPaths(attemptDir: string, name: string, sandboxed: boolean): AttemptBox {
  const dir = join(attemptDir, "box");
  return {
    dir,
    worktree: join(dir, "worktree"),
    home: join(dir, "home"),
    tmp: join(dir, "tmp"),
    out: join(dir, "out"),
    run: join(dir, "run"),
    etc: join(dir, "etc"),
    ...boxUid(name, sandboxed),
  };
}

/** Creates the box's directories (the worktree is the caller's) and hands the agent's to its uid. */
export async function makeBox(box: AttemptBox): Promise<void> {
  for (const d of [box.dir, box.home, box.tmp, box.out, box.run, box.etc]) await mkdir(d, { recursive: true });
  await chmod(box.dir, 0o711);
  await chmod(box.run, 0o755);
  const id = insideUid(box.identity);
  const passwd = `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${id}:${id}:Atelier agent:${SANDBOX_HOME}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
  await writeFile(join(box.etc, "passwd"), passwd);
  await writeFile(join(box.etc, "group"), `root:x:0:\nagent:x:${id}:\nnogroup:x:65534:\n`);
  await writeFile(join(box.etc, "hosts"), "127.0.0.1 localhost atelier-agent\n::1 localhost\n");
  for (const d of [box.home, box.tmp, box.out]) await handToAgent(box, d);
}

async function handToAgent(box: Pick<AttemptBox, "uid" | "switchUser">, path: string): Promise<void> {
  if (box.switchUser) await chown(path, box.uid, box.uid);
  await chmod(path, 0o700);
}
