import type { CommentRef } from "../loops/comment-context";

/**
 * What the product asks of the job system. lib/ knows nothing of BullMQ: jobs/queues.ts
 * implements this over BullMQ, and every job can be rebuilt from Postgres (reconcile), so
 * Redis only ever holds what can be lost.
 */
export interface Hint {
  installationId: number;
  /** owner/name, lower-cased */
  repo: string;
  number: number;
  /** The login of the webhook's sender (who labeled, opened, edited): one of the candidates for the Event's actor. */
  sender?: string;
  /** The senders of the other webhooks whose Hints this one absorbed while it waited (each a candidate too). */
  senders?: string[];
  /** The comment the webhook was about (created or edited): the comments Loops judge it. */
  comment?: CommentRef;
}

export interface WorkQueue {
  /** Re-read one Item now (deduplicated while pending); never advances the poll cursor. */
  hint(hint: Hint): Promise<void>;
  /** Move one Run (a job per open Run that can move; none for Waiting Runs). */
  moveRun(runId: string, opts?: { receivedAt?: Date; delayMs?: number }): Promise<void>;
  /** Poll one repository now, outside its schedule. */
  pollNow(repo: string): Promise<void>;
  /** Deliver one outbound webhook delivery row. */
  deliver(deliveryId: number, opts?: { delayMs?: number }): Promise<void>;
  /** Bring the job schedulers (one per repository poll, one per schedule Loop) in line with Postgres. */
  syncSchedulers(): Promise<void>;
}
