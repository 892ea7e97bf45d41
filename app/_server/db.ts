import { getDb, type Db } from "../../lib/store/kernel/db";

/** The web process's database (one pool, created on first use). */
export function db(): Db {
  return getDb();
}
