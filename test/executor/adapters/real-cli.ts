import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AdapterAgent, AgentInvocation, AgentReport, StreamParser, TranscriptStep } from "../../../lib/executor/adapters";

/**
 * Runs a real agent CLI (from node_modules/.bin) plainly — no executor, no sandbox — in a temp
 * git repository with a private HOME, feeding its raw output chunks to an adapter's parser.
 */

/**
 * A real CLI's test may take this long: each starts a Node or Rust CLI in a sandbox against a
 * scripted model API, which took 35 s on a busy machine where vitest's default is 30 s.
 */
export const REAL_CLI_TIMEOUT_MS = 120_000;

export const BIN = fileURLToPath(new URL("../../../node_modules/.bin", import.meta.url));
export const CLAUDE_BIN = join(BIN, "claude");
export const CODEX_BIN = join(BIN, "codex");

export function agent(overrides: Partial<AdapterAgent> & Pick<AdapterAgent, "kind" | "command">): AdapterAgent {
  return {
    name: overrides.kind,
    model: null,
    models: [],
    env: {},
    maxTurns: null,
    maxBudgetUsd: null,
    allowedTools: [],
    disallowedTools: [],
    mcpConfig: null,
    pricePerMillionInputUsd: null,
    pricePerMillionOutputUsd: null,
    intervene: false,
    ...overrides,
  };
}

export interface Sandbox {
  dir: string;
  repo: string;
  home: string;
  git(...args: string[]): string;
  cleanup(): void;
}

/** A git repository with one commit on main, and an empty HOME beside it. */
export function makeSandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "atelier-adapters-"));
  const repo = join(dir, "repo");
  const home = join(dir, "home");
  mkdirSync(repo);
  mkdirSync(home);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Fixture", "-c", "user.email=fixture@example.invalid", ...args], { cwd: repo, encoding: "utf8" }).trim();
  git("init", "--quiet", "-b", "main");
  git("commit", "--quiet", "--allow-empty", "-m", "Initial commit");
  return { dir, repo, home, git, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliRun {
  code: number | null;
  signal: string | null;
  steps: TranscriptStep[];
  report: AgentReport;
  stdout: string;
  stderr: string;
  /** How many chunks stdout came in. */
  chunks: number;
  durationMs: number;
}

export interface RunOptions {
  /** Secrets, as the executor passes them. */
  secrets?: Record<string, string>;
  /** Called with each step as it comes; may write to stdin (a streaming input). */
  onStep?: (step: TranscriptStep, stdin: NodeJS.WritableStream) => void;
  timeoutMs?: number;
  /** Kill the CLI (SIGKILL, as the executor's limit does) once this settles, before the timeout. */
  killWhen?: Promise<unknown>;
  /** Put node_modules/.bin first on PATH, so a roster's bare `claude` or `codex` is the real CLI. */
  binOnPath?: boolean;
  /**
   * With ATELIER_RECORD_ADAPTER_FIXTURES=1, the CLI's stdout is written to fixtures/<record>.jsonl
   * (the recorded real output the parser tests read).
   */
  record?: string;
}

export const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));

/** Spawns the invocation as the executor will: a clean env, stdin as the adapter says. */
export function runCli(sandbox: Sandbox, inv: AgentInvocation, parser: StreamParser, opts: RunOptions = {}): Promise<CliRun> {
  const started = Date.now();
  const env: Record<string, string> = {
    PATH: `${opts.binOnPath ? `${BIN}:` : ""}${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: sandbox.home,
    LANG: "C.UTF-8",
    GIT_AUTHOR_NAME: "Atelier Agent",
    GIT_AUTHOR_EMAIL: "agent@atelier.invalid",
    GIT_COMMITTER_NAME: "Atelier Agent",
    GIT_COMMITTER_EMAIL: "agent@atelier.invalid",
    ...opts.secrets,
    ...inv.env,
  };
  const file = opts.binOnPath && !inv.file.includes("/") ? join(BIN, inv.file) : inv.file;
  const child = spawn(file, inv.args, { cwd: sandbox.repo, env, stdio: ["pipe", "pipe", "pipe"] });
  const steps: TranscriptStep[] = [];
  let stdout = "";
  let stderr = "";
  let chunks = 0;
  const take = (more: TranscriptStep[]) => {
    for (const step of more) {
      steps.push(step);
      opts.onStep?.(step, child.stdin);
    }
  };
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    chunks++;
    stdout += chunk;
    take(parser.feed(chunk, "stdout"));
  });
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
    take(parser.feed(chunk, "stderr"));
  });
  child.stdin.on("error", () => undefined);
  child.stdin.write(inv.stdin.text);
  if (inv.stdin.close) child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000);
  void opts.killWhen?.then(() => child.kill("SIGKILL"));
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (opts.record && process.env.ATELIER_RECORD_ADAPTER_FIXTURES === "1") {
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(join(FIXTURES, `${opts.record}.jsonl`), stdout);
      }
      const end = parser.end({ code, signal });
      steps.push(...end.steps);
      resolveRun({ code, signal, steps, report: end.report, stdout, stderr, chunks, durationMs: Date.now() - started });
    });
  });
}

export const realClisInstalled = existsSync(CLAUDE_BIN) && existsSync(CODEX_BIN);

/** A shell command for a scripted tool call: writes hello.txt and commits it. */
export const COMMIT_HELLO = "printf 'hello\\n' > hello.txt && git add hello.txt && git commit -q -m 'Add hello.txt' && echo committed";

/** The steps of one type. */
export const ofType = <T extends TranscriptStep["type"]>(steps: TranscriptStep[], type: T) =>
  steps.filter((s): s is Extract<TranscriptStep, { type: T }> => s.type === type);
