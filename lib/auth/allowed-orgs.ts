import type { InstanceConfig } from "../config/roster";
import { listUserInstallations, type UserInstallation } from "../github/github-user-api";

/**
 * `allowed_orgs` (instance config): who may sign in at all. Unset, anyone GitHub signs in may
 * (and sees only what GitHub shows them). Set, a person must be one of those accounts, or see
 * an installation of the App on one of them — GitHub lists an installation to a person only
 * when they have access to one of its repositories. Instance admins always may.
 */
export function allowedBy(config: Pick<InstanceConfig, "allowedOrgs">, login: string, installations: readonly UserInstallation[]): boolean {
  const allowed = config.allowedOrgs;
  if (!allowed || allowed.length === 0) return true;
  if (allowed.includes(login.toLowerCase())) return true;
  return installations.some((i) => allowed.includes(i.account.toLowerCase()));
}

/** allowedBy, asking GitHub with the person's token which installations they see (nothing asked when unset). */
export async function mayUseInstance(config: Pick<InstanceConfig, "allowedOrgs">, login: string, token: string, apiUrl?: string): Promise<boolean> {
  if (!config.allowedOrgs?.length) return true;
  return allowedBy(config, login, await listUserInstallations(token, apiUrl));
}
