import { readdirSync, readFileSync } from "node:fs";

/**
 * Processes as the host sees them, by what their command line holds: a sandboxed agent's pids
 * are its own namespace's, so a test names its processes by a marker instead.
 */
export function pidsWithArgument(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/\) [ZX] /.test(stat)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").some((arg) => arg.includes(marker))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Whether the demo agent's `[demo:spawn-child]` child of an Attempt (or of any Attempt of a Run) is alive. */
export const demoChildAlive = (attemptOrRunId: string): boolean => pidsWithArgument(`atelier-demo-child:${attemptOrRunId}`).length > 0;
