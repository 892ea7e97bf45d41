import { spawn, type ChildProcess } from "node:child_process";
import { isProcessGroupAlive } from "../executor/process-group";
import { exitSentence } from "./exit-sentence";
import { nextCrashCount, restartDelayMs } from "./restart-backoff";

/**
 * The process tree of `npm start`: each child in a process group of its own (so a signal to
 * the group reaches whatever it spawned, and a Ctrl-C in the terminal reaches only the
 * supervisor, which decides the order). A child that dies is named with its exit code or
 * signal; one marked `restart` starts again after a backoff, any other stops everything.
 * Stopping signals the groups in reverse start order, each waited for (the worker drains its
 * running Attempts), and kills what is left once the grace has passed.
 */
export interface ChildSpec {
  /** Who it is, in a sentence: "the worker". */
  label: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  onExit: "restart" | "stop-all";
  /** How long a stop waits for the group before SIGKILL. */
  stopGraceMs: number;
  /** Polled after the spawn until true before the next child starts. */
  ready?: { probe: () => Promise<boolean>; timeoutMs: number; then?: string };
}

export interface SupervisorOptions {
  cwd: string;
  say: (line: string) => void;
  /** How long a second stop request (a second Ctrl-C) leaves each group before SIGKILL. */
  hurryGraceMs?: number;
  /** Called once everything stopped, before `done` resolves. */
  onStopped?: () => void;
}

export interface Supervisor {
  /** Spawns the children in order; resolves when all are started and ready. */
  start(): Promise<void>;
  /** The first call stops everything gracefully; a second one hurries. */
  stop(reason: string, code?: number): void;
  /** The exit code of the whole tree, once every group is gone. */
  readonly done: Promise<number>;
  /** The pids (and pgids) of the children running now, by label. */
  pids(): Record<string, number>;
}

interface Running {
  spec: ChildSpec;
  child: ChildProcess | null;
  /** The group of the last spawn: kept after its leader exits, for what it left behind. */
  pgid: number | null;
  startedAt: number;
  crashes: number;
  restartTimer: NodeJS.Timeout | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function createSupervisor(specs: ChildSpec[], options: SupervisorOptions): Supervisor {
  const running: Running[] = specs.map((spec) => ({ spec, child: null, pgid: null, startedAt: 0, crashes: 0, restartTimer: null }));
  let stopping = false;
  let hurried = false;
  let exitCode = 0;
  let resolveDone: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  const spawnChild = (entry: Running): ChildProcess => {
    const child = spawn(entry.spec.command, entry.spec.args, { cwd: options.cwd, env: entry.spec.env, stdio: "inherit", detached: true });
    entry.child = child;
    entry.pgid = child.pid ?? null;
    entry.startedAt = Date.now();
    child.once("error", (err) => options.say(`atelier: ${entry.spec.label} could not be started: ${err.message}`));
    child.once("exit", (code, signal) => onExit(entry, child, code, signal));
    return child;
  };

  const onExit = (entry: Running, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void => {
    if (entry.child !== child) return;
    entry.child = null;
    if (stopping) return;
    const how = exitSentence(entry.spec.label, code, signal);
    if (entry.spec.onExit === "stop-all") {
      options.say(`atelier: ${how}; stopping everything.`);
      stop(`${entry.spec.label} died`, 1);
      return;
    }
    entry.crashes = nextCrashCount(entry.crashes, Date.now() - entry.startedAt);
    const delay = restartDelayMs(entry.crashes);
    options.say(`atelier: ${how}; starting it again in ${delay / 1000} s.`);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      if (stopping) return;
      const again = spawnChild(entry);
      options.say(`atelier: ${entry.spec.label} started again (pid ${again.pid ?? "?"}).`);
    }, delay);
  };

  const waitReady = async (entry: Running, child: ChildProcess): Promise<boolean> => {
    const ready = entry.spec.ready;
    if (!ready) return true;
    const until = Date.now() + ready.timeoutMs;
    while (Date.now() < until) {
      if (stopping || entry.child !== child) return false;
      if (await ready.probe().catch(() => false)) {
        if (ready.then) options.say(ready.then);
        return true;
      }
      await sleep(200);
    }
    options.say(`atelier: ${entry.spec.label} did not become ready within ${ready.timeoutMs / 1000} s; stopping everything.`);
    stop(`${entry.spec.label} not ready`, 1);
    return false;
  };

  const stopGroup = async (entry: Running): Promise<void> => {
    const pgid = entry.pgid;
    if (!pgid || !isProcessGroupAlive(pgid)) return;
    signalGroup(pgid, "SIGTERM");
    let deadline = Date.now() + entry.spec.stopGraceMs;
    let seenHurry = hurried;
    while (isProcessGroupAlive(pgid)) {
      if (hurried && !seenHurry) {
        // the second request: the worker's second signal stops its Attempts at once
        seenHurry = true;
        signalGroup(pgid, "SIGTERM");
        deadline = Math.min(deadline, Date.now() + (options.hurryGraceMs ?? 10_000));
      }
      if (Date.now() >= deadline) {
        signalGroup(pgid, "SIGKILL");
        deadline = Number.POSITIVE_INFINITY;
      }
      await sleep(50);
    }
  };

  const stopAll = async (): Promise<void> => {
    for (const entry of running) {
      if (entry.restartTimer) clearTimeout(entry.restartTimer);
    }
    for (const entry of [...running].reverse()) await stopGroup(entry);
    options.onStopped?.();
    resolveDone(exitCode);
  };

  function stop(reason: string, code = 0): void {
    if (stopping) {
      if (!hurried) {
        hurried = true;
        options.say("atelier: stopping at once.");
      }
      return;
    }
    stopping = true;
    exitCode = code;
    options.say(`atelier: stopping (${reason}); the worker finishes its running Attempts first (again to stop at once).`);
    void stopAll();
  }

  // whatever ends the supervisor, no group outlives it
  process.once("exit", () => {
    for (const entry of running) if (entry.pgid) signalGroup(entry.pgid, "SIGKILL");
  });

  return {
    async start() {
      for (const entry of running) {
        if (stopping) return;
        const child = spawnChild(entry);
        if (!(await waitReady(entry, child))) return;
      }
    },
    stop,
    done,
    pids() {
      const out: Record<string, number> = {};
      for (const entry of running) if (entry.child?.pid) out[entry.spec.label] = entry.child.pid;
      return out;
    },
  };
}
