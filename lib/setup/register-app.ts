import type { Viewer } from "../auth/viewer";
import { ConflictError } from "../errors";
import type { Resolver } from "../http/resolver";
import type { Db } from "../store/kernel/db";
import { alreadyRegistered, readAppRegistration, storeAppCredentials, type AppRegistration } from "./app-credentials";
import { assertGitHubHostAllowed, gitHubHost, type GitHubHost } from "./github-host";
import { appManifest, manifestFormAction, type AppManifest } from "./manifest";
import { convertManifestCode } from "./manifest-conversion";
import { openSetupState, sealSetupState } from "./setup-state";
import { isSetupToken, setupTokenRequired, spendSetupToken } from "./setup-token";

/**
 * Registering Atelier's GitHub App from its manifest, in two steps: `startAppRegistration`
 * (the setup form) gives the manifest, where to post it and a signed state cookie;
 * `completeAppRegistration` (GitHub's redirect) checks the state, exchanges the code and
 * stores the credentials. Only an Atelier without an App, and not running its sandbox, may
 * register one, and only its operator: the holder of the setup token printed at start, or a
 * signed-in instance admin.
 */

export interface SetupDeps {
  db: Db;
  /** The secret that signs the state cookie (AUTH_SECRET). */
  secret: string;
  /** The key the App's credentials are sealed under (ATELIER_SECRET_KEY). */
  secretKey: string;
  /** ATELIER_PUBLIC_URL. */
  publicUrl: string;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  now?: () => number;
  /** How a GitHub Enterprise Server's name resolves (default: the system resolver). */
  resolve?: Resolver;
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

/** Who asks to register: the signed-in viewer, and the setup token the request carries. */
export interface SetupAccess {
  viewer: Viewer | null;
  token: string | null;
}

export const setupInSandbox = () =>
  new ConflictError(
    "setup_unavailable_in_sandbox",
    "Atelier is running its sandbox (the built-in GitHub simulator), so no GitHub App is registered here: start Atelier with ATELIER_SANDBOX=0 to register one from /setup.",
  );

/** Whether Atelier may be set up now by this person; throws the refusal otherwise (nothing spent). */
export async function assertMaySetUp(deps: SetupDeps, access: SetupAccess): Promise<void> {
  const status = await setupStatus(deps.db, deps.env);
  if (status.tag !== "NotRegistered") throw alreadyRegistered();
  if (status.sandbox) throw setupInSandbox();
  if (!access.viewer?.admin && !(await isSetupToken(deps.db, access.token))) throw setupTokenRequired();
}

export interface StartedRegistration {
  /** Where the browser posts the manifest (GitHub's new-App page, with the state). */
  action: string;
  manifest: AppManifest;
  /** The signed state cookie's value (HttpOnly, one hour). */
  cookie: string;
  /** The GitHub the manifest goes to, shown before the person is sent there. */
  host: GitHubHost;
}

/**
 * Checks who asks (before reading anything else), then the form, then spends the setup token:
 * a refused request — no token, a bad or private GitHub address — stores nothing and leaves
 * the token as it was.
 */
export async function startAppRegistration(deps: SetupDeps, request: RegistrationRequest, access: SetupAccess): Promise<StartedRegistration> {
  await assertMaySetUp(deps, access);
  const host = gitHubHost(request.githubUrl, deps.env);
  await assertGitHubHostAllowed(host, deps.env ?? process.env, deps.resolve);
  const manifest = appManifest(deps.publicUrl, request.name ?? undefined);
  const { state, cookie } = sealSetupState(host, deps.secret, deps.now?.() ?? Date.now());
  const action = manifestFormAction(host, request.organization ?? null, state);
  if (!access.viewer?.admin && !(await spendSetupToken(deps.db, access.token))) throw setupTokenRequired();
  return { action, manifest, cookie, host };
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
  return storeAppCredentials(deps.db, app, host, deps.secretKey);
}
