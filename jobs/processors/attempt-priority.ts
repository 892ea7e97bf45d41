/**
 * Attempt slots are served in order of Event receipt, across every worker: the order lives in
 * the queue, as the job's BullMQ priority (lower first, 1..2^21-1): the minute the Run's Event
 * was received, counted from 2026-01-01. That lasts until late 2029; after it every Run gets the
 * lowest priority and the order is the queue's arrival order. Within one minute, jobs keep their
 * arrival order. A Run moved again (an automatic retry, an operator's retry) keeps its place.
 */
const LOWEST_PRIORITY = 2_097_151;
const PRIORITY_EPOCH_MS = Date.UTC(2026, 0, 1);

export function attemptPriority(receivedAt: Date | undefined): number {
  if (!receivedAt) return LOWEST_PRIORITY;
  const minute = Math.floor((receivedAt.getTime() - PRIORITY_EPOCH_MS) / 60_000);
  return Math.min(LOWEST_PRIORITY, Math.max(1, minute + 1));
}
