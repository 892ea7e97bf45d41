/**
 * The end of `npm start` (scripts/start.sh installs, migrates and says whether the sandbox
 * applies with --sandbox, or --setup: no App yet, the dashboard only): checks the ports before
 * anything starts, builds the dashboard when its sources are newer than the build, then
 * supervises the simulator (sandbox only), the dashboard and the worker (not in setup)
 * (lib/supervisor/supervise.ts says how).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { busyPortSentence, type NeededPort } from "../lib/supervisor/busy-port";
import { needsBuild } from "../lib/supervisor/needs-build";
import { removeRunningInstance, writeRunningInstance } from "../lib/supervisor/running-instance";
import { staleSandboxSentence } from "../lib/supervisor/stale-sandbox";
import { createSupervisor, type ChildSpec } from "../lib/supervisor/supervise";
import { createDb } from "../lib/store/kernel/db";

const root = resolve(import.meta.dirname, "..");
const say = (line: string) => console.error(line);
const sandbox = process.argv.includes("--sandbox");
const setup = process.argv.includes("--setup");
const port = Number(process.env.PORT || 3000);
const simPort = Number(process.env.SIM_PORT || 3001);
const publicUrl = process.env.ATELIER_PUBLIC_URL || `http://localhost:${port}`;

const ports: NeededPort[] = [{ port, purpose: "the dashboard", variable: "PORT" }];
if (sandbox) ports.push({ port: simPort, purpose: "the sandbox GitHub simulator", variable: "SIM_PORT" });
const busy = await busyPortSentence(ports);
if (busy) {
  say(busy);
  process.exit(1);
}

const node = process.execPath;
const nextBin = join(root, "node_modules", "next", "dist", "bin", "next");
if (needsBuild(root)) {
  say("atelier: building the dashboard");
  const build = spawnSync(node, [nextBin, "build"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) {
    say("atelier: the dashboard did not build (its errors are above).");
    process.exit(1);
  }
}

const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), ATELIER_PUBLIC_URL: publicUrl };
const specs: ChildSpec[] = [];
mkdirSync(join(root, ".atelier"), { recursive: true });
if (sandbox) {
  const appFile = join(root, ".atelier", "sandbox-app.json");
  rmSync(appFile, { force: true });
  env.ATELIER_SANDBOX_APP_FILE = appFile;
  env.SIM_PORT = String(simPort);
  const simDataDir = join(root, ".atelier", "sandbox");
  const db = createDb(undefined, 1);
  try {
    const stale = await staleSandboxSentence(db, join(simDataDir, "state.json"));
    if (stale) say(stale);
  } catch {
    // the database was prepared moments ago; its trouble shows with the dashboard's start
  } finally {
    await db.close();
  }
  say(`atelier: no GitHub App configured — starting the sandbox GitHub simulator on port ${simPort}`);
  specs.push({
    label: "the sandbox GitHub simulator",
    command: node,
    args: ["--import", "tsx", "scripts/sim.ts"],
    env: { ...env, SIM_APP_FILE: appFile, SIM_DATA_DIR: simDataDir, SIM_WEBHOOK_URL: `http://127.0.0.1:${port}/api/github/webhooks` },
    onExit: "stop-all",
    stopGraceMs: 10_000,
    ready: { probe: async () => existsSync(appFile) && statSync(appFile).size > 0, timeoutMs: 60_000 },
  });
}
specs.push({
  label: "the dashboard (next start)",
  command: node,
  args: [nextBin, "start", "-p", String(port)],
  env,
  onExit: "stop-all",
  stopGraceMs: 10_000,
  ready: {
    probe: async () => (await fetch(`http://127.0.0.1:${port}/signin`, { redirect: "manual" })).status > 0,
    timeoutMs: 120_000,
    then: `atelier: dashboard on ${publicUrl}${sandbox ? ` · sandbox GitHub on http://127.0.0.1:${simPort}/_sim` : ""}`,
  },
});
// the worker signs no cookie and no OAuth exchange: it never holds those secrets
const workerEnv = { ...env };
for (const secret of ["AUTH_SECRET", "NEXTAUTH_SECRET", "GITHUB_CLIENT_SECRET"]) delete workerEnv[secret];
if (!setup) {
  specs.push({
    label: "the worker",
    command: node,
    args: ["--import", "tsx", "jobs/worker.ts"],
    env: workerEnv,
    onExit: "restart",
    // its drain waits for the running Attempts; a second Ctrl-C stops them at once
    stopGraceMs: 30 * 60_000,
  });
}

const supervisor = createSupervisor(specs, { cwd: root, say, onStopped: () => removeRunningInstance(root) });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => supervisor.stop(signal));
writeRunningInstance(root, env, process.pid);
await supervisor.start();
process.exit(await supervisor.done);
