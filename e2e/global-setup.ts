import { spawn, execFile, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { parse, stringify } from "yaml";
import { needsBuild } from "../lib/supervisor/needs-build";
import { CLAUDE_BIN } from "../test/executor/adapters/real-cli";
import { startFakeAnthropic } from "../test/support/fake-anthropic";
import { freePort } from "../test/support/free-port";
import { startNpmRegistry } from "../test/support/npm-registry";
import { CLAUDE_ENV_SCRIPT, CLAUDE_SCRIPT } from "./real-agent-script";

/**
 * The stack the browser tests run against, started once:
 *  - a fresh database (E2E_DATABASE_URL, default atelier_e2e), migrated, and an emptied Redis
 *    database of its own (E2E_REDIS_URL, default db 13): Run ids are hashes of Event keys, so
 *    the same sandbox gives the same ids run after run, and a job left by an earlier run must
 *    not shadow this run's;
 *  - the GitHub simulator (scripts/sim.ts, the demo world), on a free port;
 *  - the dashboard: `next build` when the sources are newer than the build, then `next start`
 *    on a free port, browsed as http://localhost:PORT (next-auth 5 redirects by request host);
 *  - the worker (jobs/worker.ts), when it exists, with the instance config e2e/atelier.e2e.yml
 *    plus a `claude` agent: the real Claude Code CLI, in its sandbox, against a scripted
 *    Messages API on a loopback port (e2e/real-agent-script.ts), and `claude-env`, the same CLI
 *    against a second script of its own (e2e/environment.spec.ts);
 *  - a local npm registry (verdaccio, test/support/npm-registry.ts), the instance's only
 *    `registries:` entry, its URL in E2E_NPM_REGISTRY_URL: nothing installs from the internet;
 *  - for the setup page, a second dashboard with no App yet (its own database, E2E_SETUP_URL)
 *    and a simulator of its own (E2E_SETUP_SIM_URL).
 * Specs read E2E_BASE_URL, E2E_SIM_URL and E2E_DATABASE_URL. Logs: test-results/e2e-stack/.
 */

const ROOT = resolve(import.meta.dirname, "..");
export const LOGS = join(ROOT, "test-results", "e2e-stack");

export async function waitFor(what: string, probe: () => Promise<boolean>, child: ChildProcess, timeoutMs: number, log: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}); see ${log}`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not start within ${timeoutMs / 1000} s; see ${log}`);
}

export function start(name: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; log: string } {
  const log = join(LOGS, `${name}.log`);
  const out = openSync(log, "w");
  const child = spawn("npx", args, { cwd: ROOT, env, stdio: ["ignore", out, out], detached: true });
  return { child, log };
}

/** The real Claude Code CLI as a roster entry, its model API the fake one at `modelApiUrl`. */
function claudeAgent(modelApiUrl: string): Record<string, unknown> {
  const claude = realpathSync(CLAUDE_BIN);
  return {
    kind: "claude",
    command: [claude],
    model: "claude-sonnet-4-5",
    // the egress gateway adds the key and forwards to the fake (plain HTTP on loopback); the agent holds a placeholder
    model_api: { url: modelApiUrl, secret: "ANTHROPIC_API_KEY" },
    price_per_million_input_usd: 3,
    price_per_million_output_usd: 15,
    read_only_paths: [dirname(dirname(claude))],
    max_attempt_minutes: 3,
  };
}

/**
 * e2e/atelier.e2e.yml with the real Claude Code CLI as agents `claude` and `claude-env` (each its
 * own scripted model API), and the local npm registry as the instance's only registry.
 */
function instanceConfig(modelApiUrl: string, envModelApiUrl: string, registryPort: number): string {
  const config = parse(readFileSync(join(ROOT, "e2e", "atelier.e2e.yml"), "utf8")) as { agents: Record<string, unknown>; registries?: string[] };
  config.agents.claude = claudeAgent(modelApiUrl);
  config.agents["claude-env"] = claudeAgent(envModelApiUrl);
  config.registries = [`127.0.0.1:${registryPort}`];
  const file = join(LOGS, "atelier.e2e.yml");
  writeFileSync(file, stringify(config));
  return file;
}

export async function freshDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const name = new URL(url).pathname.slice(1).replace(/"/g, '""');
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  await promisify(execFile)("npx", ["prisma", "migrate", "deploy"], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url, CHECKPOINT_DISABLE: "1" } });
}

/** Starts the GitHub simulator (scripts/sim.ts) whose webhooks go to the dashboard on `dashboardPort`; resolves to its URL. */
export async function startSimulator(
  name: string,
  port: number,
  file: string,
  dashboardPort: number,
  env: NodeJS.ProcessEnv,
  children: ChildProcess[],
): Promise<string> {
  const sim = start(name, ["tsx", "scripts/sim.ts"], {
    ...env,
    SIM_PORT: String(port),
    SIM_APP_FILE: file,
    SIM_WEBHOOK_URL: `http://127.0.0.1:${dashboardPort}/api/github/webhooks`,
  });
  children.push(sim.child);
  await waitFor(`the ${name}`, async () => existsSync(file) && statSync(file).size > 0, sim.child, 30_000, sim.log);
  return (JSON.parse(readFileSync(file, "utf8")) as { baseUrl: string }).baseUrl;
}

/** `next build` when the sources are newer than the build (or E2E_BUILD=1). */
export function buildDashboardIfNeeded(env: NodeJS.ProcessEnv): void {
  if (!needsBuild(ROOT) && process.env.E2E_BUILD !== "1") return;
  const build = join(LOGS, "next-build.log");
  try {
    execFileSync("npx", ["next", "build"], { cwd: ROOT, env: { ...env, NODE_ENV: "production" }, stdio: ["ignore", openSync(build, "w"), openSync(build, "a")] });
  } catch {
    throw new Error(`next build failed; see ${build}`);
  }
}

/** The environment of a sandbox stack's processes: its database, Redis, dashboard port and App file; no real GitHub App. */
export function stackEnv(opts: { databaseUrl: string; redisUrl: string; webPort: number; appFile: string; config: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    CHECKPOINT_DISABLE: "1",
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl,
    AUTH_SECRET: process.env.E2E_AUTH_SECRET ?? "e2e-auth-secret-0123456789abcdef0123456789",
    ATELIER_CONFIG: opts.config,
    ATELIER_SANDBOX_APP_FILE: opts.appFile,
    ATELIER_PUBLIC_URL: `http://localhost:${opts.webPort}`,
    ATELIER_WORKSPACE: join(LOGS, "workspaces"),
    // the notifications spec's Slack receiver listens on loopback
    ATELIER_ALLOW_PRIVATE_WEBHOOKS: "1",
    PORT: String(opts.webPort),
  };
  for (const key of ["GITHUB_APP_ID", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "GITHUB_API_URL", "GITHUB_WEB_URL", "AUTH_URL", "NEXTAUTH_URL"]) delete env[key];
  return env;
}

/** `next start` on `port`, once its sign-in page answers; resolves to its URL (http://localhost:PORT). */
export async function startDashboard(name: string, port: number, env: NodeJS.ProcessEnv, children: ChildProcess[]): Promise<string> {
  const web = start(name, ["next", "start", "-p", String(port)], env);
  children.push(web.child);
  const url = `http://localhost:${port}`;
  await waitFor(`the dashboard (${name})`, async () => (await fetch(`${url}/signin`)).ok, web.child, 60_000, web.log);
  return url;
}

/** SIGTERM to the process group of each child still running, the last started first. */
export async function stopChildren(children: ChildProcess[]): Promise<void> {
  for (const child of children.reverse()) {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
    }
  }
  await new Promise((r) => setTimeout(r, 300));
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  mkdirSync(LOGS, { recursive: true });
  const databaseUrl = process.env.E2E_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_e2e";
  const setupDatabaseUrl = process.env.E2E_SETUP_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_e2e_setup";
  const redisUrl = process.env.E2E_REDIS_URL ?? "redis://127.0.0.1:6379/13";
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  await redis.quit();

  // what the two stacks need, side by side: their databases, the model APIs, the registry
  const [modelApi, envModelApi, registry] = await Promise.all([
    startFakeAnthropic(CLAUDE_SCRIPT),
    startFakeAnthropic(CLAUDE_ENV_SCRIPT),
    startNpmRegistry(),
    freshDatabase(databaseUrl),
    freshDatabase(setupDatabaseUrl),
  ]);
  const [webPort, simPort, setupPort, setupSimPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const appFile = join(LOGS, "sandbox-app.json");
  const env: NodeJS.ProcessEnv = {
    ...stackEnv({ databaseUrl, redisUrl, webPort, appFile, config: instanceConfig(modelApi.url, envModelApi.url, registry.port) }),
    ANTHROPIC_API_KEY: "sk-ant-api03-e2e-test-key-0123456789",
  };

  const children: ChildProcess[] = [];
  const stop = async () => {
    await stopChildren(children);
    await modelApi.close();
    await envModelApi.close();
    await registry.stop();
  };

  /** The flows' stack: the simulator, the dashboard and the worker. */
  const flows = async () => {
    const simUrl = await startSimulator("simulator", simPort, appFile, webPort, env, children);
    const baseUrl = await startDashboard("next", webPort, env, children);
    const worker = existsSync(join(ROOT, "jobs", "worker.ts"));
    if (worker) {
      const w = start("worker", ["tsx", "jobs/worker.ts"], env);
      children.push(w.child);
    }
    return { simUrl, baseUrl, worker };
  };

  /** The setup page's own stack: no App yet, and a simulator of its own (registering an App replaces the simulator's, and the flows need theirs). */
  const setup = async () => {
    const setupSimUrl = await startSimulator("setup-simulator", setupSimPort, join(LOGS, "setup-sim-app.json"), setupPort, env, children);
    const setupEnv: NodeJS.ProcessEnv = {
      ...env,
      DATABASE_URL: setupDatabaseUrl,
      ATELIER_PUBLIC_URL: `http://localhost:${setupPort}`,
      PORT: String(setupPort),
      GITHUB_WEB_URL: setupSimUrl,
      GITHUB_API_URL: setupSimUrl,
    };
    delete setupEnv.ATELIER_SANDBOX_APP_FILE;
    const setupWeb = start("setup-next", ["next", "start", "-p", String(setupPort)], setupEnv);
    children.push(setupWeb.child);
    const setupUrl = `http://localhost:${setupPort}`;
    await waitFor("the setup dashboard", async () => (await fetch(`${setupUrl}/setup`)).ok, setupWeb.child, 60_000, setupWeb.log);
    // the one-time setup token the web process prints as it starts, as an operator reads it
    await waitFor("the setup token", async () => /\/setup\?token=\S+/.test(readFileSync(setupWeb.log, "utf8")), setupWeb.child, 60_000, setupWeb.log);
    return { setupSimUrl, setupUrl, token: /\/setup\?token=(\S+)/.exec(readFileSync(setupWeb.log, "utf8"))![1] };
  };

  try {
    // the build (when one is needed) comes before either dashboard starts
    buildDashboardIfNeeded(env);
    const [{ simUrl, baseUrl, worker }, { setupSimUrl, setupUrl, token }] = await Promise.all([flows(), setup()]);
    process.env.E2E_SETUP_TOKEN = token;
    process.env.E2E_BASE_URL = baseUrl;
    process.env.E2E_SIM_URL = simUrl;
    process.env.E2E_SETUP_URL = setupUrl;
    process.env.E2E_SETUP_SIM_URL = setupSimUrl;
    process.env.E2E_DATABASE_URL = databaseUrl;
    process.env.E2E_WORKER = worker ? "1" : "0";
    process.env.E2E_NPM_REGISTRY_URL = registry.url;
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
}
