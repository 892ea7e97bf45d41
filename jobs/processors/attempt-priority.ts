/**
 * Attempt slots are served in order of Event receipt, across every worker: the order lives in
 * the queue, as the job's BullMQ priority (lower first, 1..2^21-1): the quarter hour in which
 * the Run's Event was received, counted from 2026-01-01. 2^21 quarter hours last until 2085
 * (one-minute steps ran out in late 2029, after which every Run got the same priority and
 * the order was lost). Within one quarter hour, jobs keep their arrival order, which is the
 * order of receipt for new Runs; a Run moved again (an automatic retry, an operator's retry)
 * keeps its place ahead of every later quarter hour.
 */
const LOWEST_PRIORITY = 2_097_151;
const PRIORITY_EPOCH_MS = Date.UTC(2026, 0, 1);
/** One step of the order: a quarter hour. */
export const PRIORITY_STEP_MS = 15 * 60_000;

export function attemptPriority(receivedAt: Date | undefined): number {
  if (!receivedAt) return LOWEST_PRIORITY;
  const step = Math.floor((receivedAt.getTime() - PRIORITY_EPOCH_MS) / PRIORITY_STEP_MS);
  return Math.min(LOWEST_PRIORITY, Math.max(1, step + 1));
}
