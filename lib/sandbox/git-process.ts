import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

/** Every git process the simulator starts, so close() can stop the ones still running. */
export class GitProcesses {
  private readonly running = new Set<ChildProcess>();

  spawn(args: string[], options: SpawnOptions): ChildProcess {
    const child = spawn("git", args, options);
    this.running.add(child);
    child.once("exit", () => this.running.delete(child));
    child.once("error", () => this.running.delete(child));
    return child;
  }

  /** Runs git to completion; rejects with git's stderr on a non-zero exit. */
  run(args: string[], options: { cwd: string; input?: string | Buffer; env?: NodeJS.ProcessEnv; okCodes?: number[] }): Promise<{ stdout: Buffer; code: number }> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
      child.once("error", reject);
      child.once("close", (code) => {
        const exit = code ?? -1;
        if (exit === 0 || options.okCodes?.includes(exit)) resolve({ stdout: Buffer.concat(out), code: exit });
        else reject(new Error(`git ${args.join(" ")} failed (${exit}): ${Buffer.concat(err).toString("utf8").trim()}`));
      });
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(options.input ?? "");
    });
  }

  killAll(): void {
    for (const child of this.running) child.kill("SIGKILL");
    this.running.clear();
  }
}
