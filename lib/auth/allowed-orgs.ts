import type { Db } from "../store/kernel/db";
import type { InstanceConfig } from "../config/roster";
import { listUserInstallations, type UserInstallation } from "../github/github-user-api";
import { configAccountIds } from "./config-accounts";

/**
 * `allowed_orgs` (instance config): who may sign in at all. Unset, anyone GitHub signs in may
 * (and sees only what GitHub shows them). Set, a person must be one of those accounts, or see
 * an installation of the App on one of them — GitHub lists an installation to a person only
 * when they have access to one of its repositories. The accounts are matched by GitHub id,
 * each login resolved once (config-accounts.ts): an organization that renames stays allowed,
 * one created later under an allowed organization's old login is not. Instance admins always may.
 */
export function allowedBy(allowed: ReadonlySet<string>, accountId: string, installations: readonly UserInstallation[]): boolean {
  return allowed.has(accountId) || installations.some((i) => allowed.has(String(i.accountId)));
}

/** The account ids `allowed_orgs` names; null when it is unset (everyone may sign in). */
export async function allowedAccountIds(db: Db, config: Pick<InstanceConfig, "allowedOrgs">, token: string | null, apiUrl?: string): Promise<Set<string> | null> {
  if (!config.allowedOrgs?.length) return null;
  return configAccountIds(db, config.allowedOrgs, token, apiUrl);
}

/** allowedBy, asking GitHub with the person's token which installations they see (nothing asked when unset). */
export async function mayUseInstance(db: Db, config: Pick<InstanceConfig, "allowedOrgs">, accountId: string, token: string, apiUrl?: string): Promise<boolean> {
  const allowed = await allowedAccountIds(db, config, token, apiUrl);
  if (allowed === null) return true;
  return allowedBy(allowed, accountId, await listUserInstallations(token, apiUrl));
}
