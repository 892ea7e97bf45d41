import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every child still running; killed when the chaos run exits, however it exits. */
const LIVE = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of LIVE) child.kill("SIGKILL");
});

/** A child process of the chaos run: started by a command, its output in a log file, killed with -9 on purpose. */
export class Child {
  private child: ChildProcess | null = null;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly logFile: string,
    private readonly readyLine: RegExp,
  ) {}

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and resolves once it printed its ready line (or throws after `timeoutMs`). */
  async start(timeoutMs = 120_000): Promise<void> {
    const out = createWriteStream(this.logFile, { flags: "a" });
    const child = spawn(process.execPath, ["--import", "tsx", resolve(ROOT, this.script)], { cwd: ROOT, env: this.env(), stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    LIVE.add(child);
    child.once("exit", () => LIVE.delete(child));
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${this.name} did not start within ${timeoutMs / 1000} s (see ${this.logFile})`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        if (!this.readyLine.test(chunk.toString())) return;
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        ok();
      };
      child.stdout!.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`${this.name} exited with ${code} before it was ready (see ${this.logFile})`));
      });
    });
  }

  /** Resolves once its log holds a line matching `line` (or throws after `timeoutMs`). */
  async logged(line: RegExp, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!line.test(readFileSync(this.logFile, "utf8"))) {
      if (Date.now() > deadline) throw new Error(`${this.name} did not log ${String(line)} within ${timeoutMs / 1000} s (see ${this.logFile})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** kill -9, and wait until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
  }

  /** A clean stop (SIGTERM), with kill -9 after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await gone;
    clearTimeout(timer);
  }
}
