import pg from "pg";
import { databaseUrl } from "./database-url";
import { outageOf } from "../../errors";

/** How long a probe waits for a connection before it calls the database unreachable. */
const CONNECT_TIMEOUT_MS = 3_000;

let probe: pg.Pool | undefined;

/**
 * Whether Postgres answers now: one `SELECT 1` on a pool of one connection of its own (the
 * web process asks before it renders a page, so that an outage is a 503 and not a page that
 * half renders). Only an outage (lib/errors.ts `outageOf`) says no; any other error is the
 * page's to meet.
 */
export async function databaseReachable(url: string = databaseUrl()): Promise<boolean> {
  probe ??= new pg.Pool({ connectionString: url, max: 1, allowExitOnIdle: true, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }).on("error", () => {
    /* the idle connection was cut (Postgres stopped): the next probe connects again */
  });
  try {
    await probe.query("SELECT 1");
    return true;
  } catch (err) {
    if (outageOf(err, { DATABASE_URL: url })) return false;
    throw err;
  }
}
