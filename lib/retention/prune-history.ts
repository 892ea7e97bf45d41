import type { RetentionDays } from "../config/roster";
import type { Db } from "../store/kernel/db";
import {
  pruneAuditBatch,
  pruneDeliveryBatch,
  pruneEventPayloadBatch,
  pruneTranscriptBatch,
  recordSweep,
  type PrunedKind,
} from "../store/retention/prune-batches";

/**
 * Retention (ADR 0085): what is older than the instance's `retention:` days is pruned, in
 * batches, each its own short statement (lib/store/retention/prune-batches.ts): transcripts cut
 * to their summary and last lines (Runs and Attempts kept), Event payloads shed (their keys
 * kept: once per content holds for ever), audit rows and delivery logs deleted. The worker's
 * maintenance queue runs it every hour; a sweep stops a kind once a batch finds nothing.
 */

const PRUNE_BATCH = 500;
const DAY_MS = 86_400_000;

export type PruneResult = Record<PrunedKind, number>;

/** The horizon of `days`: rows older than this are pruned. */
const horizonOf = (days: number, now: Date): Date => new Date(now.getTime() - days * DAY_MS);

/** Runs `batch` until it prunes nothing (or `maxBatches` ran); the rows pruned. */
async function drain(batch: () => Promise<number>, maxBatches: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const pruned = await batch();
    total += pruned;
    if (pruned === 0) break;
  }
  return total;
}

/** One sweep of every kind, as `retention` says; what it pruned is recorded for the Usage page. */
export async function pruneHistory(db: Db, retention: RetentionDays, opts: { now?: Date; batch?: number; maxBatches?: number } = {}): Promise<PruneResult> {
  const now = opts.now ?? new Date();
  const limit = opts.batch ?? PRUNE_BATCH;
  const maxBatches = opts.maxBatches ?? 1000;
  const horizons: Record<PrunedKind, Date> = {
    transcripts: horizonOf(retention.transcripts, now),
    event_payloads: horizonOf(retention.eventPayloads, now),
    audit: horizonOf(retention.audit, now),
    deliveries: horizonOf(retention.deliveries, now),
  };
  const result: PruneResult = {
    transcripts: await drain(async () => (await pruneTranscriptBatch(db, horizons.transcripts, limit)).attempts, maxBatches),
    event_payloads: await drain(() => pruneEventPayloadBatch(db, horizons.event_payloads, limit), maxBatches),
    audit: await drain(() => pruneAuditBatch(db, horizons.audit, limit), maxBatches),
    deliveries: await drain(() => pruneDeliveryBatch(db, horizons.deliveries, limit), maxBatches),
  };
  for (const kind of Object.keys(result) as PrunedKind[]) await recordSweep(db, kind, result[kind], horizons[kind]);
  return result;
}

export { KEPT_TRANSCRIPT_LINES } from "../store/retention/prune-batches";
