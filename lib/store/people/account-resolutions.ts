import type { Db } from "../kernel/db";

/**
 * The instance config's logins as resolved (`account_resolutions`, lib/auth/config-accounts.ts):
 * on a GitHub host, a login, lower-cased, and the account id it named when it was first
 * resolved there. A resolution is never overwritten: whoever later takes the login is not the
 * account the config meant.
 */

/** The stored account ids of these logins on `host`, by login. */
export async function resolvedAccounts(db: Db, host: string, logins: string[]): Promise<Map<string, string>> {
  const found = await db.prisma.accountResolution.findMany({ where: { host, login: { in: logins } }, select: { login: true, githubId: true } });
  return new Map(found.map((a) => [a.login, a.githubId]));
}

/** Stores a login's resolution on `host`, unless one is stored already (the first one stays). */
export async function recordAccountResolution(db: Db, host: string, login: string, githubId: string): Promise<void> {
  await db.prisma.accountResolution.createMany({ data: [{ host, login, githubId }], skipDuplicates: true });
}
