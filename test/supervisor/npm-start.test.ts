import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { descendants } from "../support/processes";

/**
 * `npm start` as a person runs it (scripts/start.sh, then the supervisor), in this checkout with
 * ports, a database, a Redis prefix and a workspace of its own: killing the worker is said and
 * recovered from, a SIGINT leaves no process of the tree, a worker started by hand joins the
 * sandbox, and a busy port is one sentence before anything starts.
 */
const ROOT = resolve(__dirname, "../..");
const START_MS = 10 * 60_000; // the first start may build the dashboard

// a database npm start creates and migrates itself, as on a new machine
const dbUrl = new URL(process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test");
dbUrl.pathname = `/atelier_npmstart_${process.pid}`;
let workspace: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  await dropDatabase();
  workspace = mkdtempSync(join(tmpdir(), "atelier-npm-start-"));
});
afterAll(async () => {
  for (const child of started) if (child.pid) killGroup(child.pid);
  await dropDatabase();
  rmSync(workspace, { recursive: true, force: true });
});

async function dropDatabase(): Promise<void> {
  const admin = new URL(dbUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${dbUrl.pathname.slice(1)}" WITH (FORCE)`);
  await client.end();
}

/**
 * Kills the supervisor's group and every process below it: the supervisor starts the web and the
 * worker in groups of their own, which a test that failed before its Ctrl-C would leave running.
 */
function killGroup(pgid: number): void {
  const below = descendants(pgid);
  for (const target of [-pgid, ...below]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // gone
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => res(port));
    });
  });
}

interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  cmdline: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z" || fields[0] === "X") continue;
      out.push({ pid: Number(entry), ppid: Number(fields[1]), pgrp: Number(fields[2]), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ") });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Every live process below `pid`, and it. */
function tree(pid: number): Proc[] {
  const all = processes();
  const found = all.filter((p) => p.pid === pid);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return found;
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs: number, log: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s. Output so far:\n${log()}`);
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function npmStart(env: Record<string, string>): Started {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ["GITHUB_APP_ID", "ATELIER_SANDBOX_APP_FILE", "ATELIER_CONFIG", "AUTH_URL", "NEXTAUTH_URL", "NODE_ENV"]) delete base[key];
  const child = spawn("bash", ["scripts/start.sh"], {
    cwd: ROOT,
    env: {
      ...base,
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379/7",
      ATELIER_REDIS_PREFIX: `npmstart-${process.pid}`,
      ATELIER_WORKSPACE: workspace,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.push(child);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  return { child, output: () => out, exit };
}

it(
  "the worker killed under npm start is named with its signal and started again; after Ctrl-C no process of the tree is left",
  async () => {
    const [port, simPort] = [await freePort(), await freePort()];
    const run = npmStart({ PORT: String(port), SIM_PORT: String(simPort) });
    const pid = run.child.pid!;
    await until("the dashboard answers", () => run.output().includes(`dashboard on http://localhost:${port}`), START_MS, run.output);
    const worker = await until("the worker runs", () => tree(pid).find((p) => p.cmdline.includes("jobs/worker.ts")), 60_000, run.output);
    // each child leads a process group of its own
    expect(worker.pgrp).toBe(worker.pid);
    await until("the worker is up", () => run.output().includes("worker started"), 120_000, run.output);
    // a quiet start: the simulator's first deliveries waited for the dashboard
    const sim = `http://127.0.0.1:${simPort}`;
    const deliveries = (await (await fetch(`${sim}/_sim/deliveries`)).json()) as { event: string; status: string }[];
    expect(deliveries.filter((d) => d.status !== "delivered")).toEqual([]);
    expect(run.output()).not.toContain("fetch failed");

    process.kill(worker.pid, "SIGKILL");
    await until("the supervisor says so", () => run.output().includes("the worker was killed by SIGKILL; starting it again in 1 s."), 30_000, run.output);
    const again = await until(
      "a new worker runs",
      () => tree(pid).find((p) => p.cmdline.includes("jobs/worker.ts") && p.pid !== worker.pid),
      60_000,
      run.output,
    );
    // the supervisor says so right after the spawn; its pipe may bring that after /proc shows the process
    await until("the supervisor says it started again", () => run.output().includes(`the worker started again (pid ${again.pid})`), 30_000, run.output);
    // the dashboard and the simulator were left alone
    expect(run.output()).not.toContain("stopping everything");
    expect((await fetch(`http://127.0.0.1:${port}/signin`)).status).toBe(200);

    // `npm run worker` beside it, with nothing set, joins the sandbox instead of crashing
    const joinEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const key of ["DATABASE_URL", "REDIS_URL", "ATELIER_SANDBOX_APP_FILE", "GITHUB_APP_ID", "ATELIER_REDIS_PREFIX", "ATELIER_WORKSPACE"]) delete joinEnv[key];
    const joiner = spawn("node", ["--import", "tsx", "jobs/worker.ts"], { cwd: ROOT, env: joinEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    started.push(joiner);
    let joined = "";
    joiner.stdout!.on("data", (d: Buffer) => (joined += d.toString()));
    joiner.stderr!.on("data", (d: Buffer) => (joined += d.toString()));
    await until("the second worker joins and starts", () => joined.includes("joining the instance") && joined.includes("worker started"), 120_000, () => joined);
    expect(joined).toContain(`http://127.0.0.1:${simPort}`);
    const joinerExit = new Promise((res) => joiner.once("exit", res));
    process.kill(joiner.pid!, "SIGTERM");
    await joinerExit;

    // what happens in the sandbox's GitHub is kept for the next start
    const kept = (await (await fetch(`${sim}/_sim/control/createIssue`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ repo: "demo-org/api", title: `Kept across a restart ${process.pid}` }) })).json()) as { number: number };
    expect(kept.number).toBeGreaterThan(0);

    const everyone = tree(pid);
    expect(everyone.map((p) => p.cmdline).join("\n")).toMatch(/scripts\/sim\.ts[\s\S]*next/);
    const groups = new Set(everyone.map((p) => p.pgrp));
    process.kill(pid, "SIGINT");
    expect(await run.exit).toBe(0);
    expect(run.output()).toContain("atelier: stopping (SIGINT)");
    const left = processes().filter((p) => everyone.some((e) => e.pid === p.pid) || groups.has(p.pgrp));
    expect(left.map((p) => `${p.pid} ${p.cmdline}`)).toEqual([]);
    expect(readFileSync(join(ROOT, ".atelier", "sandbox", "state.json"), "utf8")).toContain(`Kept across a restart ${process.pid}`);
    // the settings a joining worker reads are gone with the supervisor
    expect(() => readFileSync(join(ROOT, ".atelier", "instance.json"))).toThrow();
  },
  START_MS + 5 * 60_000,
);

it("a busy port is one sentence, before anything starts", async () => {
  const holder: Server = createServer();
  await new Promise<void>((res) => holder.listen(0, "127.0.0.1", res));
  const { port } = holder.address() as { port: number };
  try {
    const run = npmStart({ PORT: String(port), SIM_PORT: String(await freePort()) });
    expect(await run.exit).toBe(1);
    const lines = run.output().trim().split("\n");
    expect(lines.at(-1)).toBe(
      `atelier: port ${port}, which the dashboard needs, is already in use (another \`npm start\` still running?): stop what holds it, or choose another with PORT=<port>.`,
    );
    expect(run.output()).not.toMatch(/EADDRINUSE|starting the sandbox|at .*\.js:\d+/);
  } finally {
    await new Promise((res) => holder.close(res));
  }
}, 180_000);
