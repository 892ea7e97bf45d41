import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { resolve } from "node:path";
import { waitFor } from "./runner-fixture";
import type { SimWorld } from "./sim-world";

const ENTRY = resolve(__dirname, "worker-entry.ts");

export interface WorkerChildOptions {
  workerId: string;
  /** the test's database (TEST_DATABASE_URL of the child) */
  dbUrl: string;
  prefix: string;
  world: SimWorld;
  workspaceRoot: string;
  leaseTtlMs: number;
  /** the demo agent's delay between its steps; the entry's own default when not given */
  demoDelayMs?: number;
  /** more of the entry's environment (CLAUDE_API_URL, SESSION_SAVE_EVERY_MS, DRAIN_TIMEOUT_MS…) */
  env?: Record<string, string>;
}

export interface WorkerChild {
  child: ChildProcess;
  output: () => string;
  /** its exit code (null when a signal ended it) */
  exited: Promise<number | null>;
}

/**
 * The worker as a real child process (node + tsx, support/worker-entry.ts: the worker's own
 * wiring), once it says it is ready; what it prints is kept for the test to read.
 */
export async function spawnWorkerChild(o: WorkerChildOptions): Promise<WorkerChild> {
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY], {
    cwd: resolve(__dirname, "../../.."),
    env: {
      ...process.env,
      TEST_DATABASE_URL: o.dbUrl,
      RUNNER_PREFIX: o.prefix,
      GITHUB_SETTINGS: JSON.stringify(o.world.settings),
      WORKSPACE_ROOT: o.workspaceRoot,
      WORKER_ID: o.workerId,
      LEASE_TTL_MS: String(o.leaseTtlMs),
      ...(o.demoDelayMs !== undefined ? { DEMO_DELAY_MS: String(o.demoDelayMs) } : {}),
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  try {
    await waitFor(`worker ${o.workerId} ready`, async () => out.includes("worker ready") || (child.exitCode !== null && Promise.reject(new Error(out))), 60_000);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return { child, output: () => out, exited };
}

/** Kills the children still running (a test's afterEach). */
export function killChildren(children: ChildProcess[]): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}

/** Kills what a dead worker left running under its workspace root (their cwd is inside it), should die-with-parent miss one. */
export function killAgentsUnder(root: string): void {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(root)) process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone, or not ours
    }
  }
}
