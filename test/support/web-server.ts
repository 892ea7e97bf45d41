import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port";
import { descendants } from "./processes";
import { needsBuild } from "../../lib/supervisor/needs-build";

/**
 * The web process itself (`next start` of this checkout's build, made when missing or older
 * than its sources), with an
 * environment of the test's own, for the tests that must watch the real server: its status
 * codes under an outage, its memory under a large request.
 */
export interface WebServer {
  url: string;
  /** The pids of the server process and its children (Next may fork its server). */
  pids(): number[];
  /** Resident memory of the server process and its children, in bytes. */
  rss(): number;
  /** What the process printed (stdout and stderr) so far. */
  output(): string;
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * The environment of a test's web process: the test's own, with its own sign-in and sealing
 * secrets (named for the test) and no GitHub App unless `env` gives one.
 */
export function webServerEnv(name: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AUTH_SECRET: `${name}-test-secret-0123456789`,
    ATELIER_SECRET_KEY: `${name}-test-key-0123456789`,
    ATELIER_SANDBOX_APP_FILE: "",
    GITHUB_APP_ID: "",
    ...env,
  };
}

/**
 * `next build` when the sources are newer than the build. The global setup calls it before any
 * test file runs: two files building at once in one directory (a web test's and `npm start`'s
 * supervisor) would delete each other's `.next`, and one `next start` would find no build.
 */
export function buildDashboardIfNeeded(): void {
  if (!needsBuild(ROOT)) return;
  execFileSync("npx", ["next", "build"], { cwd: ROOT, env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" }, stdio: "ignore" });
}

export async function startWebServer(env: NodeJS.ProcessEnv, ready = "/signin"): Promise<WebServer> {
  buildDashboardIfNeeded();
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "node_modules/next/dist/bin/next"), "start", "-p", String(port)], {
    cwd: ROOT,
    env: { ...env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", PORT: String(port), ATELIER_PUBLIC_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited ${child.exitCode}: ${output}`);
    try {
      await fetch(`${url}${ready}`, { redirect: "manual" });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`next start did not answer within 120 s: ${output}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const pids = () => descendants(child.pid!);
  return {
    url,
    pids,
    rss: () => pids().reduce((sum, pid) => sum + rssOf(pid), 0),
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      for (const pid of pids().reverse()) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      await exited;
    },
  };
}
