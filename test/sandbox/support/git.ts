import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real git CLI, isolated from the machine's config and credential helpers. */
export function git(args: string[], cwd: string, home: string): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-c", "user.name=Agent", "-c", "user.email=agent@example.test", "-c", "credential.helper=", "-c", "init.defaultBranch=main", ...args],
      { cwd, env: { PATH: process.env.PATH, HOME: home, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1" } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "sim-git-test-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** `http://x-access-token:<token>@host/owner/repo.git` */
export function authedCloneUrl(simUrl: string, fullName: string, token: string): string {
  const url = new URL(`${simUrl}/${fullName}.git`);
  url.username = "x-access-token";
  url.password = token;
  return url.toString();
}
