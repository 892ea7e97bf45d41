import { readdirSync, readFileSync } from "node:fs";

/**
 * Process and process-group questions for the agent's own group (spawned `detached: true`, so
 * its pgid is its pid). On Linux /proc answers them exactly, zombies counted as gone (a child
 * reparented to a PID 1 that does not reap stays a zombie, but it holds nothing); elsewhere a
 * signal 0 answers them.
 */

const HAS_PROC = process.platform === "linux" && safeExists("/proc/self/stat");

function safeExists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

interface ProcStat {
  state: string;
  pgrp: number;
  startTime: string;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function readStat(pid: number | string): ProcStat | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), fields[2] is field 5 (pgrp), fields[19] is field 22 (starttime).
  return { state: fields[0] ?? "", pgrp: Number(fields[2]), startTime: fields[19] ?? "" };
}

/** Whether `pid` names a live (not zombie) process. */
export function isProcessAlive(pid: number): boolean {
  if (HAS_PROC) {
    const stat = readStat(pid);
    return stat !== null && stat.state !== "Z" && stat.state !== "X";
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether any live (not zombie) process remains in the process group `pgid`. */
export function isProcessGroupAlive(pgid: number): boolean {
  if (HAS_PROC) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(entry);
      if (stat && stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A token that tells one incarnation of a pid from another (Linux start time), or null. */
export function processStartTime(pid: number): string | null {
  return HAS_PROC ? (readStat(pid)?.startTime ?? null) : null;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stops every process of the group: SIGTERM, then SIGKILL once `graceMs` has passed with any
 * member still alive. Resolves when the group is gone (or, after SIGKILL, at most 2 s later).
 */
export async function terminateProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!isProcessGroupAlive(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  const termDeadline = Date.now() + graceMs;
  while (Date.now() < termDeadline) {
    await sleep(Math.min(50, Math.max(1, termDeadline - Date.now())));
    if (!isProcessGroupAlive(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
  const killDeadline = Date.now() + 2_000;
  while (Date.now() < killDeadline) {
    if (!isProcessGroupAlive(pgid)) return;
    await sleep(25);
  }
}
