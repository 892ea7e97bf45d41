// CPU time spent by the processes a benchmark drives, read from /proc: Postgres (its
// postmaster and every backend), Redis and Node (this process and any other), so that a
// throughput ratio can be read as where each side spends its CPU. On a machine with no
// /proc the readings are empty. Everything of those names is counted, so a test suite
// running beside the benchmark inflates them. A process's reading includes the CPU of its
// children that exited (cutime, cstime): a backend that ends within a measured window (a pool
// closing an idle connection) would otherwise take its whole lifetime's CPU out of that
// window's reading, and the postmaster, which reaps it, keeps what it used.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export type CpuSide = "postgres" | "redis" | "node";

const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function sideOf(comm: string): CpuSide | null {
  if (comm.startsWith("postgres")) return "postgres";
  if (comm.startsWith("redis-server")) return "redis";
  if (comm === "node") return "node";
  return null;
}

/** Milliseconds of CPU (user and system, with their exited children's) each side has used so far. */
export function cpuNow(): Record<CpuSide, number> {
  const used: Record<CpuSide, number> = { postgres: 0, redis: 0, node: 0 };
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return used;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const side = sideOf(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")));
    if (!side) continue;
    // after the command: state is field 3; utime, stime, cutime and cstime are fields 14 to 17
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
    used[side] += (ticks / TICKS_PER_S) * 1000;
  }
  return used;
}

/** Adds the CPU each side used while `work` ran to `into`. */
export async function countingCpu<T>(into: Record<CpuSide, number>, work: () => Promise<T>): Promise<T> {
  const before = cpuNow();
  const result = await work();
  const after = cpuNow();
  for (const side of Object.keys(into) as CpuSide[]) into[side] += after[side] - before[side];
  return result;
}

export const noCpu = (): Record<CpuSide, number> => ({ postgres: 0, redis: 0, node: 0 });
