import type { Db } from "../kernel/db";

/**
 * The one-time setup token (`setup_token`, lib/setup/setup-token.ts): one row, id 1, holding
 * only the token's SHA-256. Issuing replaces it; spending deletes it, once.
 */

/** Makes `tokenHash` the setup token, replacing the one an earlier start stored. */
export async function replaceSetupToken(db: Db, tokenHash: string): Promise<void> {
  await db.prisma.setupToken.upsert({ where: { id: 1 }, create: { id: 1, tokenHash }, update: { tokenHash, createdAt: new Date() } });
}

/** Whether `tokenHash` is the setup token's now. */
export async function isSetupTokenHash(db: Db, tokenHash: string): Promise<boolean> {
  return (await db.prisma.setupToken.count({ where: { id: 1, tokenHash } })) === 1;
}

/** Deletes the setup token if `tokenHash` is its: true for the one caller that deleted it. */
export async function spendSetupTokenHash(db: Db, tokenHash: string): Promise<boolean> {
  return (await db.prisma.setupToken.deleteMany({ where: { id: 1, tokenHash } })).count === 1;
}

/** Deletes the setup token, whichever it is (an App is stored: setup is over). */
export async function deleteSetupToken(db: Db): Promise<void> {
  await db.prisma.setupToken.deleteMany({});
}
