import { readdirSync, readFileSync } from "node:fs";

/** Every live process's argv (zombies left out), as the host sees them. */
function liveArgvs(): Array<{ pid: number; argv: string[] }> {
  const found: Array<{ pid: number; argv: string[] }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/\) [ZX] /.test(stat)) continue;
      found.push({ pid: Number(entry), argv: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0") });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Processes as the host sees them, by what their command line holds: a sandboxed agent's pids
 * are its own namespace's, so a test names its processes by a marker instead.
 */
export function pidsWithArgument(marker: string): number[] {
  return liveArgvs()
    .filter((p) => p.argv.some((arg) => arg.includes(marker)))
    .map((p) => p.pid);
}

/**
 * The live processes of one Attempt whose command line holds `marker`: those whose environment
 * says the Attempt's id (agent-env.ts sets ATELIER_ATTEMPT_ID), so the same CLI run by another
 * test at the same time (the browser specs, beside these files) is not counted.
 */
export function attemptPidsWithArgument(marker: string, attemptId: string): number[] {
  return pidsWithArgument(marker).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`ATELIER_ATTEMPT_ID=${attemptId}`);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** The arguments of live processes that start with `prefix` (one scan of /proc). */
export function argumentsStartingWith(prefix: string): string[] {
  return liveArgvs().flatMap((p) => p.argv.filter((arg) => arg.startsWith(prefix)));
}

/** Whether the demo agent's `[demo:spawn-child]` child of an Attempt (or of any Attempt of a Run) is alive. */
export const demoChildAlive = (attemptOrRunId: string): boolean => pidsWithArgument(`atelier-demo-child:${attemptOrRunId}`).length > 0;

/** The process and every process below it (children, their children, …), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []));
  return all;
}
