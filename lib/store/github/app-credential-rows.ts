import type { Db } from "../kernel/db";

/**
 * The GitHub App's credentials (`app_credentials`): one row, id 1, written once by the manifest
 * flow (lib/setup/app-credentials.ts). Its private key, webhook secret and client secret are
 * handed to this module sealed (lib/secrets/credential-box.ts) and read back sealed.
 */

/** What may be shown of the stored App: never its key or secrets. */
export interface StoredAppRegistration {
  appId: number;
  slug: string;
  htmlUrl: string;
  baseUrl: string;
  createdAt: Date;
}

export interface SealedAppCredentials {
  appId: number;
  slug: string;
  privateKey: string;
  webhookSecret: string;
  clientId: string;
  clientSecret: string;
  htmlUrl: string;
  baseUrl: string;
}

const REGISTRATION = { appId: true, slug: true, htmlUrl: true, baseUrl: true, createdAt: true } as const;
const CREDENTIALS = { appId: true, slug: true, privateKey: true, webhookSecret: true, clientId: true, clientSecret: true, htmlUrl: true, baseUrl: true } as const;

const registration = (row: { appId: bigint; slug: string; htmlUrl: string; baseUrl: string; createdAt: Date }): StoredAppRegistration => ({ ...row, appId: Number(row.appId) });

/** Stores the App unless one is stored: null when there was one already (it is never overwritten). */
export async function insertAppCredentials(db: Db, app: SealedAppCredentials): Promise<StoredAppRegistration | null> {
  const [row] = await db.prisma.appCredential.createManyAndReturn({ data: [{ id: 1, ...app }], skipDuplicates: true, select: REGISTRATION });
  return row ? registration(row) : null;
}

/** The stored App, or null. */
export async function storedAppRegistration(db: Db): Promise<StoredAppRegistration | null> {
  const row = await db.prisma.appCredential.findUnique({ where: { id: 1 }, select: REGISTRATION });
  return row ? registration(row) : null;
}

/** The stored App with its credentials as stored (sealed, or plain in a row older than sealing), or null. */
export async function readAppCredentials(db: Db): Promise<SealedAppCredentials | null> {
  const row = await db.prisma.appCredential.findUnique({ where: { id: 1 }, select: CREDENTIALS });
  return row ? { ...row, appId: Number(row.appId) } : null;
}

/** Replaces the credentials of a row stored before sealing existed, unless its key changed meanwhile. */
export async function replacePlainCredentials(
  db: Db,
  plainPrivateKey: string,
  sealed: Pick<SealedAppCredentials, "privateKey" | "webhookSecret" | "clientSecret">,
): Promise<void> {
  await db.prisma.appCredential.updateMany({ where: { id: 1, privateKey: plainPrivateKey }, data: sealed });
}
