import type { ChildProcess } from "node:child_process";

/** A child's start and end, listened to at once: its first events may come before the caller awaits anything. */
export interface ChildWatch {
  /** Null once it runs; the error when it could not start. */
  spawned: Promise<NodeJS.ErrnoException | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function watchChild(child: ChildProcess): ChildWatch {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const spawned = new Promise<NodeJS.ErrnoException | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", (err) => resolve(err));
  });
  child.on("error", () => undefined);
  return { spawned, exited };
}
