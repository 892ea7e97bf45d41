import type { Db } from "../kernel/db";

/**
 * Instance admins as resolved (`instance_admins`, lib/auth/admins.ts): a config login,
 * lower-cased, and the GitHub account id it named when it was first resolved. A resolution is
 * never overwritten: whoever later takes the login is not the admin.
 */

/** The stored account ids of these logins, by login. */
export async function resolvedAdmins(db: Db, logins: string[]): Promise<Map<string, string>> {
  const admins = await db.prisma.instanceAdmin.findMany({ where: { login: { in: logins } }, select: { login: true, githubId: true } });
  return new Map(admins.map((a) => [a.login, a.githubId]));
}

/** Stores a login's resolution, unless one is stored already (the first one stays). */
export async function recordAdminResolution(db: Db, login: string, githubId: string): Promise<void> {
  await db.prisma.instanceAdmin.createMany({ data: [{ login, githubId }], skipDuplicates: true });
}
