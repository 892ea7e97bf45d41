import type { Db } from "../store/db";
import { alreadyRegistered, readAppRegistration, storeAppCredentials, type AppRegistration } from "./app-credentials";
import { gitHubHost } from "./github-host";
import { appManifest, manifestFormAction, type AppManifest } from "./manifest";
import { convertManifestCode } from "./manifest-conversion";
import { openSetupState, sealSetupState } from "./setup-state";

/**
 * Registering Atelier's GitHub App from its manifest, in two steps: `startAppRegistration`
 * (the setup form) gives the manifest, where to post it and a signed state cookie;
 * `completeAppRegistration` (GitHub's redirect) checks the state, exchanges the code and
 * stores the credentials. Only an Atelier without an App may register one.
 */

export interface SetupDeps {
  db: Db;
  /** The secret that signs the state cookie (AUTH_SECRET). */
  secret: string;
  /** ATELIER_PUBLIC_URL. */
  publicUrl: string;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  now?: () => number;
}

export type SetupStatus =
  | { tag: "FromEnvironment"; appId: string }
  | { tag: "Registered"; registration: AppRegistration }
  | { tag: "NotRegistered"; sandbox: boolean };

/** Whether Atelier has an App: from the environment, from the manifest flow, or none yet. */
export async function setupStatus(db: Db, env: NodeJS.ProcessEnv = process.env): Promise<SetupStatus> {
  if (env.GITHUB_APP_ID) return { tag: "FromEnvironment", appId: env.GITHUB_APP_ID };
  const registration = await readAppRegistration(db);
  if (registration) return { tag: "Registered", registration };
  return { tag: "NotRegistered", sandbox: Boolean(env.ATELIER_SANDBOX_APP_FILE) };
}

export interface RegistrationRequest {
  /** A GitHub Enterprise Server's web address; empty for github.com. */
  githubUrl?: string | null;
  /** Register the App under this organization instead of the person's account. */
  organization?: string | null;
  name?: string | null;
}

export interface StartedRegistration {
  /** Where the browser posts the manifest (GitHub's new-App page, with the state). */
  action: string;
  manifest: AppManifest;
  /** The signed state cookie's value (HttpOnly, one hour). */
  cookie: string;
}

export async function startAppRegistration(deps: SetupDeps, request: RegistrationRequest): Promise<StartedRegistration> {
  if ((await setupStatus(deps.db, deps.env)).tag !== "NotRegistered") throw alreadyRegistered();
  const host = gitHubHost(request.githubUrl, deps.env);
  const manifest = appManifest(deps.publicUrl, request.name ?? undefined);
  const { state, cookie } = sealSetupState(host, deps.secret, deps.now?.() ?? Date.now());
  return { action: manifestFormAction(host, request.organization ?? null, state), manifest, cookie };
}

export interface RegistrationCallback {
  code: string;
  state: string;
  /** The state cookie the browser sent back. */
  cookie: string | null;
}

export async function completeAppRegistration(deps: SetupDeps, callback: RegistrationCallback): Promise<AppRegistration> {
  const host = openSetupState(callback.cookie, callback.state, deps.secret, deps.now?.() ?? Date.now());
  if ((await setupStatus(deps.db, deps.env)).tag !== "NotRegistered") throw alreadyRegistered();
  const app = await convertManifestCode(host, callback.code, deps.fetch);
  return storeAppCredentials(deps.db, app, host);
}
