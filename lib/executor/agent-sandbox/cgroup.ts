import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxLimits } from "./policy";

/**
 * The control group of one Attempt's sandbox: memory, process and CPU limits from the roster,
 * and the list of every process the agent started (a `setsid` child included), so that the
 * end of the Attempt kills them all. cgroup v2 where the host has it unified, else the v1
 * `memory`, `pids` and `cpu` hierarchies. Needs write access to the hierarchy (root, or a
 * delegated subtree); without it the Attempt runs without limits and says so.
 */

export interface AttemptCgroup {
  /** The `cgroup.procs` files a process writes its pid to, to join (before it execs the agent). */
  readonly procsFiles: string[];
  /** Every pid in the group now. */
  pids(): Promise<number[]>;
  /** Kills every process of the group and removes it. */
  destroy(): Promise<void>;
}

const ROOT = "/sys/fs/cgroup";
const PARENT = "atelier";
const PERIOD_US = 100_000;

const isV2 = () => existsSync(join(ROOT, "cgroup.controllers"));

async function writeLimit(dir: string, file: string, value: string): Promise<void> {
  await writeFile(join(dir, file), value);
}

async function readPids(file: string): Promise<number[]> {
  try {
    return (await readFile(file, "utf8")).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function killAndRemove(dirs: string[], procsFile: string, v2: boolean): Promise<void> {
  for (let round = 0; round < 50; round++) {
    if (v2 && existsSync(join(dirs[0]!, "cgroup.kill"))) await writeFile(join(dirs[0]!, "cgroup.kill"), "1").catch(() => undefined);
    const pids = await readPids(procsFile);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    let left = 0;
    for (const dir of dirs) {
      try {
        await rmdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") left++;
      }
    }
    if (left === 0) return;
    await sleep(20);
  }
}

/** Creates the group with its limits; the reason when this host gives none. */
export async function createAttemptCgroup(name: string, limits: SandboxLimits): Promise<AttemptCgroup | { unavailable: string }> {
  const memory = String(Math.max(16, Math.floor(limits.memoryMb)) * 1024 * 1024);
  const pids = String(Math.max(8, Math.floor(limits.pids)));
  const quota = String(Math.max(1_000, Math.round(limits.cpus * PERIOD_US)));
  try {
    if (isV2()) {
      const parent = join(ROOT, PARENT);
      await mkdir(parent, { recursive: true });
      await appendFile(join(ROOT, "cgroup.subtree_control"), "+memory +pids +cpu").catch(() => undefined);
      await appendFile(join(parent, "cgroup.subtree_control"), "+memory +pids +cpu").catch(() => undefined);
      const dir = join(parent, name);
      await mkdir(dir, { recursive: true });
      await writeLimit(dir, "memory.max", memory);
      await writeLimit(dir, "pids.max", pids);
      await writeLimit(dir, "cpu.max", `${quota} ${PERIOD_US}`).catch(() => undefined);
      const procs = join(dir, "cgroup.procs");
      return { procsFiles: [procs], pids: () => readPids(procs), destroy: () => killAndRemove([dir], procs, true) };
    }
    const dirs = { memory: join(ROOT, "memory", PARENT, name), pids: join(ROOT, "pids", PARENT, name), cpu: join(ROOT, "cpu", PARENT, name) };
    for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });
    await writeLimit(dirs.memory, "memory.limit_in_bytes", memory);
    await writeLimit(dirs.pids, "pids.max", pids);
    await writeLimit(dirs.cpu, "cpu.cfs_period_us", String(PERIOD_US));
    await writeLimit(dirs.cpu, "cpu.cfs_quota_us", quota);
    const procsFiles = Object.values(dirs).map((d) => join(d, "cgroup.procs"));
    const pidsProcs = join(dirs.pids, "cgroup.procs");
    return { procsFiles, pids: () => readPids(pidsProcs), destroy: () => killAndRemove(Object.values(dirs), pidsProcs, false) };
  } catch (err) {
    return { unavailable: `no cgroup limits on this host (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}
