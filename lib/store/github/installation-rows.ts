import { query, rows, sql } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";

/** An installation as its webhook or GET /app/installations gives it. */
export interface InstallationInput {
  id: number;
  /** its account: `id` is GitHub's id of the account, the owner of the installation's repositories */
  account: { login: string; id?: number; type?: string };
  suspended_at?: string | null;
}

/** Stores the installation as GitHub gives it: present again (not deleted), suspended or not. */
export async function upsertInstallation(tx: Sql, installation: InstallationInput): Promise<void> {
  await query(
    tx,
    sql`INSERT INTO installations (id, account_login, account_id, account_type, suspended_at, deleted_at, updated_at)
     VALUES (${installation.id}, ${installation.account.login}, ${installation.account.id ?? null}::bigint, ${installation.account.type ?? "Organization"}, ${installation.suspended_at ? new Date(installation.suspended_at) : null}, NULL, now())
     ON CONFLICT (id) DO UPDATE SET account_login = EXCLUDED.account_login, account_id = COALESCE(EXCLUDED.account_id, installations.account_id), account_type = EXCLUDED.account_type,
       suspended_at = EXCLUDED.suspended_at, deleted_at = NULL, updated_at = now()`,
  );
}

export async function markInstallationDeleted(tx: Sql, installationId: number): Promise<void> {
  await query(tx, sql`UPDATE installations SET deleted_at = now(), updated_at = now() WHERE id = ${installationId}`);
}

/** Marks deleted every installation not among `known` (GitHub no longer lists it); returns their ids. */
export async function markInstallationsDeletedExcept(tx: Sql, known: readonly number[]): Promise<number[]> {
  const deleted = await rows<{ id: number }>(
    tx,
    sql`UPDATE installations SET deleted_at = now(), updated_at = now() WHERE deleted_at IS NULL AND NOT (id = ANY(${known}::bigint[])) RETURNING id`,
  );
  return deleted.map((r) => r.id);
}
