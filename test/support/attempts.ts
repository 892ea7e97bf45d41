import { admitAttempt } from "../../lib/metering/admission";
import type { Db } from "../../lib/store/kernel/db";
import { startAttempt, type StartResult } from "../../lib/store/runs/attempts";
import { readRunSnapshot } from "../../lib/store/runs/start-basis";

/**
 * Starts the next Attempt of a Run as the runner does: read the Run, start on that version,
 * read again when it changed meanwhile. A Run no Attempt can start from is a conflict.
 */
export async function beginAttempt(db: Db, runId: string, lease: { token: string; workerId: string }): Promise<Exclude<StartResult, { tag: "Changed" }>> {
  for (;;) {
    const snap = await readRunSnapshot(db, runId);
    if (!snap) throw new Error(`No Run ${runId}.`);
    const begun = await startAttempt(db, snap, lease, admitAttempt);
    if (begun.tag !== "Changed") return begun;
  }
}
