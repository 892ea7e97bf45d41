import { spawn } from "node:child_process";

/**
 * Runs git for the executor. The environment is small and fixed (no worker secrets, no GIT_DIR
 * from outside, C locale so errors can be classified, never a prompt), and a credential, when
 * given, travels only as an http.extraHeader in GIT_CONFIG_* variables: never in a URL, never in
 * a config file.
 */

export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ""} failed (exit ${exitCode ?? "signal"}): ${lastLines(stderr, 3)}`);
    this.name = "GitCommandError";
  }
}

export interface GitOptions {
  cwd: string;
  /** The installation token, for commands that talk to the remote. */
  token?: string;
  /** The remote the token is for; the header is scoped to its origin when it is http(s). */
  remoteUrl?: string;
  /** Extra environment (author identity and the like). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Non-zero exits that are answers, not errors (e.g. `diff --quiet`). */
  okExitCodes?: number[];
  /** Written to the command's stdin (else it is closed at once). */
  input?: string;
  /** Keep at most this many bytes of stdout: past it git is stopped and the result says `cut`. */
  maxStdoutBytes?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** stdout was cut at `maxStdoutBytes` (git was stopped there). */
  cut?: boolean;
}

/** The identity of commits made on the agent's behalf. */
export const AGENT_IDENTITY = {
  GIT_AUTHOR_NAME: "Atelier Agent",
  GIT_AUTHOR_EMAIL: "agent@atelier.invalid",
  GIT_COMMITTER_NAME: "Atelier Agent",
  GIT_COMMITTER_EMAIL: "agent@atelier.invalid",
} as const;

/** The Authorization header value git sends for an installation token. */
export function basicAuthHeader(token: string): string {
  return `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
}

/** GIT_CONFIG_* variables carrying the credential (and disabling credential helpers). */
export function gitAuthEnv(token: string, remoteUrl?: string): Record<string, string> {
  let key = "http.extraHeader";
  if (remoteUrl) {
    const url = new URL(remoteUrl);
    if (url.protocol === "https:" || url.protocol === "http:") key = `http.${url.protocol}//${url.host}/.extraHeader`;
  }
  return {
    GIT_CONFIG_COUNT: "2",
    GIT_CONFIG_KEY_0: "credential.helper",
    GIT_CONFIG_VALUE_0: "",
    GIT_CONFIG_KEY_1: key,
    GIT_CONFIG_VALUE_1: basicAuthHeader(token),
  };
}

/**
 * The base environment of every git command the executor runs: no system or global config
 * (nothing on the host steers it), C locale, never a prompt.
 */
export function baseGitEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LC_ALL: "C",
    LANG: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "true",
    SSH_ASKPASS: "true",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
  };
  if (process.env.HOME) env.HOME = process.env.HOME;
  return env;
}

/**
 * Settings given on every command line: hooks, fsmonitor and external transports can never run
 * a program, whatever a repository's own config says (the worker's git only ever opens
 * repositories it made, but the rule costs nothing).
 */
const HARDENED_GIT_CONFIG: readonly (readonly [string, string])[] = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["protocol.ext.allow", "never"],
];

export const HARDENED_GIT_ARGS: readonly string[] = HARDENED_GIT_CONFIG.flatMap(([key, value]) => ["-c", `${key}=${value}`]);

/** The same settings as GIT_CONFIG_* variables, for a git that Atelier does not start itself (in a sandbox's script). */
export function hardenedGitConfigEnv(): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(HARDENED_GIT_CONFIG.length) };
  HARDENED_GIT_CONFIG.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

export function git(args: string[], options: GitOptions): Promise<GitResult> {
  const env = {
    ...baseGitEnv(),
    ...(options.token ? gitAuthEnv(options.token, options.remoteUrl) : {}),
    ...options.env,
  };
  const fullArgs = [...HARDENED_GIT_ARGS, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn("git", fullArgs, { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"], signal: options.signal });
    child.stdin.on("error", () => undefined).end(options.input);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const limit = options.maxStdoutBytes ?? Infinity;
    let kept = 0;
    let cut = false;
    child.stdout.on("data", (b: Buffer) => {
      if (cut) return;
      if (kept + b.length > limit) {
        out.push(b.subarray(0, limit - kept));
        cut = true;
        child.kill("SIGKILL");
        return;
      }
      kept += b.length;
      out.push(b);
    });
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e) => reject(e));
    child.on("close", (code) => {
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8");
      if (cut) resolve({ stdout, stderr, exitCode: code ?? -1, cut });
      else if (code === 0 || (code !== null && options.okExitCodes?.includes(code))) {
        resolve({ stdout, stderr, exitCode: code });
      } else {
        reject(new GitCommandError(args, code, stderr));
      }
    });
  });
}

export function lastLines(text: string, n: number): string {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(" | ");
}

export type GitErrorClass = "authentication" | "not_found" | "transport" | "rejected" | "declined" | "other";

/** What a failed fetch or push says about its cause. */
export function classifyGitError(stderr: string): GitErrorClass {
  const s = stderr.toLowerCase();
  if (/stale info|\[rejected\]|non-fast-forward|fetch first|failed to update ref|cannot lock ref/.test(s)) return "rejected";
  if (
    /authentication failed|could not read username|could not read password|invalid username or password|permission to .* denied|returned error: 40[13]|access denied|bad credentials|refusing to allow a github app/.test(
      s,
    )
  ) {
    return "authentication";
  }
  if (/repository not found|returned error: 404|does not appear to be a git repository|not found/.test(s)) return "not_found";
  if (
    /returned error: 5\d\d|could not resolve host|connection refused|connection timed out|failed to connect|operation timed out|rpc failed|early eof|unexpected disconnect|remote end hung up|ssl|tls|gnutls|network is unreachable|connection reset|http\/2 stream/.test(
      s,
    )
  ) {
    return "transport";
  }
  if (/hook declined|pre-receive|protected branch|gh\d{3}:/.test(s)) return "declined";
  return "other";
}
