import { ConflictError } from "../errors";
import { insertAppCredentials, storedAppRegistration, type StoredAppRegistration } from "../store/github/app-credential-rows";
import type { Db } from "../store/kernel/db";
import { deleteSetupToken } from "../store/github/setup-tokens";
import type { GitHubHost } from "./github-host";
import { sealCredential } from "../secrets/credential-box";
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

const toRegistration = (stored: StoredAppRegistration): AppRegistration => ({ ...stored, installUrl: installUrl(stored.htmlUrl) });

export const alreadyRegistered = () =>
  new ConflictError("app_already_registered", "Atelier already has a GitHub App; install it on your repositories from the setup page.");

/**
 * Stores the App's credentials (the one row of app_credentials). The key and secrets go to
 * Postgres only, sealed under `key` (ATELIER_SECRET_KEY); a second registration is refused, so
 * the first App's credentials are never overwritten by a replayed code. Any setup token left
 * is spent with it.
 */
export async function storeAppCredentials(db: Db, app: AppConversion, host: GitHubHost, key: string): Promise<AppRegistration> {
  const stored = await insertAppCredentials(db, {
    appId: app.id,
    slug: app.slug,
    privateKey: sealCredential(app.pem, key),
    webhookSecret: sealCredential(app.webhook_secret, key),
    clientId: app.client_id,
    clientSecret: sealCredential(app.client_secret, key),
    htmlUrl: app.html_url,
    baseUrl: host.apiUrl,
  });
  if (!stored) throw alreadyRegistered();
  await deleteSetupToken(db);
  return toRegistration(stored);
}

/** The App the manifest flow registered, or null. */
export async function readAppRegistration(db: Db): Promise<AppRegistration | null> {
  const stored = await storedAppRegistration(db);
  return stored ? toRegistration(stored) : null;
}
