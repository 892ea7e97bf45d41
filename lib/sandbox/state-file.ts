import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { SimClock } from "./sim-clock";
import type { SimState } from "./state/sim-state";

/**
 * The simulated GitHub kept across a restart of `npm start`: everything SimState holds (its
 * accounts, repositories, Items, comments, check runs, installations, tokens, the App and its
 * keys, the id counter — any field a module adds is kept too), with the clock's offset, in one
 * JSON file beside the bare git repositories. Written whole to a temporary file then renamed,
 * so a reader (or a restart after a crash) sees the last complete state, never half of one.
 * It holds the sandbox App's private key and tokens: readable by this user only.
 */
const VERSION = 1;
/** Parts of SimState that are wiring, not state. */
const NOT_STATE = new Set(["clock", "listeners"]);
/** A burst of changes (a seed, a Run's comments) is written once. */
const WRITE_AFTER_MS = 50;

interface Snapshot {
  version: number;
  clockOffsetMs: number;
  state: Record<string, unknown>;
}

function encode(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { $map: [...value.entries()] };
  if (value instanceof Set) return { $set: [...value] };
  return value;
}

function decode(_key: string, value: unknown): unknown {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    if ("$map" in value) return new Map((value as { $map: [unknown, unknown][] }).$map);
    if ("$set" in value) return new Set((value as { $set: unknown[] }).$set);
  }
  return value;
}

function snapshot(state: SimState, clock: SimClock): string {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) if (!NOT_STATE.has(key)) fields[key] = value;
  return JSON.stringify({ version: VERSION, clockOffsetMs: clock.now() - Date.now(), state: fields } satisfies Snapshot, encode);
}

/**
 * Restores `state` and `clock` from `path`. Returns false, touching nothing, when there is no
 * file, or one of another version or that does not parse (a fresh world is seeded then).
 */
export function restoreState(path: string, state: SimState, clock: SimClock): boolean {
  let saved: Snapshot;
  try {
    saved = JSON.parse(readFileSync(path, "utf8"), decode) as Snapshot;
  } catch {
    return false;
  }
  if (saved.version !== VERSION || typeof saved.state !== "object") return false;
  const target = state as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(saved.state)) {
    if (NOT_STATE.has(key) || !(key in target)) continue;
    const current = target[key];
    if (current instanceof Map && value instanceof Map) {
      current.clear();
      for (const [k, v] of value) current.set(k, v);
    } else if (Array.isArray(current) && Array.isArray(value)) {
      current.splice(0, current.length, ...(value as unknown[]));
    } else {
      target[key] = value;
    }
  }
  clock.set(Date.now() + saved.clockOffsetMs);
  return true;
}

/** Writes the state to `path` soon after a change; `flush` writes now (the simulator's close). */
export class StateFile {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly path: string,
    private readonly state: SimState,
    private readonly clock: SimClock,
  ) {
    mkdirSync(dirname(path), { recursive: true });
  }

  changed(): void {
    this.timer ??= setTimeout(() => this.flush(), WRITE_AFTER_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const partial = `${this.path}.${process.pid}.tmp`;
    writeFileSync(partial, snapshot(this.state, this.clock), { mode: 0o600 });
    renameSync(partial, this.path);
  }
}
