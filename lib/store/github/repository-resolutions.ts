import type { Db } from "../kernel/db";

/**
 * The roster's `allow:` repository entries as resolved (`repository_resolutions`, ADR 0091): on a
 * GitHub host, an owner/name, lower-cased, and the id of the repository that held that name when
 * it was first resolved there. A resolution is never overwritten: a repository that later takes
 * the name is not the one the roster meant.
 */

/** The stored repository ids of these names on `host`, by name. */
export async function resolvedRepositories(db: Db, host: string, names: string[]): Promise<Map<string, string>> {
  const found = await db.prisma.repositoryResolution.findMany({ where: { host, fullName: { in: names } }, select: { fullName: true, githubId: true } });
  return new Map(found.map((r) => [r.fullName, r.githubId]));
}

/** Stores a name's resolution on `host`, unless one is stored already (the first one stays). */
export async function recordRepositoryResolution(db: Db, host: string, fullName: string, githubId: string): Promise<void> {
  await db.prisma.repositoryResolution.createMany({ data: [{ host, fullName, githubId }], skipDuplicates: true });
}
