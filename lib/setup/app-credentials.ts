import { ConflictError } from "../errors";
import type { Db } from "../store/db";
import type { GitHubHost } from "./github-host";
import { sealCredential } from "./credential-box";
import type { AppConversion } from "./manifest-conversion";
import { installUrl } from "./manifest";

/** What may be shown of the registered App: never its key or secrets. */
export interface AppRegistration {
  appId: number;
  slug: string;
  htmlUrl: string;
  installUrl: string;
  /** The API the App lives on. */
  baseUrl: string;
  createdAt: Date;
}

interface Row {
  app_id: number;
  slug: string;
  html_url: string;
  base_url: string;
  created_at: Date;
}

const toRegistration = (row: Row): AppRegistration => ({
  appId: Number(row.app_id),
  slug: row.slug,
  htmlUrl: row.html_url,
  installUrl: installUrl(row.html_url),
  baseUrl: row.base_url,
  createdAt: row.created_at,
});

export const alreadyRegistered = () =>
  new ConflictError("app_already_registered", "Atelier already has a GitHub App; install it on your repositories from the setup page.");

/**
 * Stores the App's credentials (the one row of app_credentials). The key and secrets go to
 * Postgres only, sealed under `key` (ATELIER_SECRET_KEY); a second registration is refused, so
 * the first App's credentials are never overwritten by a replayed code. Any setup token left
 * is spent with it.
 */
export async function storeAppCredentials(db: Db, app: AppConversion, host: GitHubHost, key: string): Promise<AppRegistration> {
  const { rows } = await db.pool.query<Row>(
    `INSERT INTO app_credentials (id, app_id, slug, private_key, webhook_secret, client_id, client_secret, html_url, base_url)
     VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING
     RETURNING app_id, slug, html_url, base_url, created_at`,
    [app.id, app.slug, sealCredential(app.pem, key), sealCredential(app.webhook_secret, key), app.client_id, sealCredential(app.client_secret, key), app.html_url, host.apiUrl],
  );
  if (!rows[0]) throw alreadyRegistered();
  await db.pool.query(`DELETE FROM setup_token`);
  return toRegistration(rows[0]);
}

/** The App the manifest flow registered, or null. */
export async function readAppRegistration(db: Db): Promise<AppRegistration | null> {
  const { rows } = await db.pool.query<Row>(`SELECT app_id, slug, html_url, base_url, created_at FROM app_credentials WHERE id = 1`);
  return rows[0] ? toRegistration(rows[0]) : null;
}
