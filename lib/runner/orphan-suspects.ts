import type { Redis } from "ioredis";

/**
 * How long the orphan sweeps have seen each Attempt unheld, by Redis's clock, so that one sweep
 * need not wait for the next look: the first sighting sets a key (NX) that lives twice the
 * confirmation window, and an Attempt's time unheld is that lifetime less the key's PTTL. 0 for
 * an Attempt seen unheld for the first time (or whose key Redis lost: looked at anew, never
 * sooner).
 */
export async function unheldForMs(redis: Redis, keyOf: (attemptId: string) => string, attemptIds: readonly string[], confirmMs: number): Promise<number[]> {
  if (!attemptIds.length) return [];
  const lifetime = 2 * confirmMs;
  const pipeline = redis.pipeline();
  for (const id of attemptIds) pipeline.set(keyOf(id), "1", "PX", lifetime, "NX").pttl(keyOf(id));
  const answers = (await pipeline.exec()) ?? [];
  return attemptIds.map((_, i) => {
    const [setFailed, set] = answers[2 * i] ?? [new Error("no answer")];
    const [pttlFailed, pttl] = answers[2 * i + 1] ?? [new Error("no answer")];
    if (setFailed || pttlFailed) throw setFailed ?? pttlFailed;
    const left = Number(pttl);
    return set === "OK" || left < 0 ? 0 : lifetime - left;
  });
}

/** Forgets the sightings of Attempts that are held again or closed: a later loss is timed from its own first sighting. */
export async function forgetSuspects(redis: Redis, keyOf: (attemptId: string) => string, attemptIds: readonly string[]): Promise<void> {
  if (attemptIds.length) await redis.del(...attemptIds.map(keyOf));
}
