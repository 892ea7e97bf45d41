import type { Db } from "../kernel/db";
import { first, sql } from "../kernel/sql";

/** An Attempt's state and the lease token it runs under, as its worker checks them. */
export interface AttemptLease {
  state: string;
  lease_token: string | null;
}

/**
 * What the Attempt's row says of who holds it (undefined when there is none): a worker reads it
 * while its Attempt runs, and after its outcome was refused, to tell a cancel from a lost lease.
 */
export function attemptLease(db: Db, attemptId: string): Promise<AttemptLease | undefined> {
  return first<AttemptLease>(db.pool, sql`SELECT state, lease_token FROM attempts WHERE id = ${attemptId}`);
}
