import { BadInputError } from "../errors";
import type { GitHubHost } from "./github-host";

/**
 * The GitHub App manifest Atelier registers itself with (GitHub's "manifest flow", as Probot
 * apps do): a person posts it to GitHub's new-App page, GitHub creates the App and redirects to
 * `redirect_url` with a one-hour code, and the code is exchanged for the App's credentials.
 */

/** What Atelier asks of each installation. */
export const APP_PERMISSIONS = Object.freeze({
  issues: "write",
  pull_requests: "write",
  contents: "write",
  checks: "write",
  // commit statuses (other CI's), for item.checks and the status event
  statuses: "read",
  metadata: "read",
  members: "read",
} as const);

/**
 * The events the App subscribes to. `installation` and `installation_repositories` reach every
 * App without asking, and GitHub refuses a manifest that lists them ("Default events
 * unsupported"), so they are not here.
 */
export const APP_EVENTS = Object.freeze(["repository", "issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment", "pull_request_review_thread", "label", "check_run", "check_suite", "status", "push"] as const);

export const DEFAULT_APP_NAME = "Atelier";
/** GitHub's limit on an App's name. */
const APP_NAME_MAX = 34;

export interface AppManifest {
  name: string;
  url: string;
  hook_attributes: { url: string; active: boolean };
  redirect_url: string;
  callback_urls: string[];
  setup_url: string;
  public: boolean;
  default_permissions: Record<string, "read" | "write">;
  default_events: string[];
}

/** The manifest for this Atelier, reachable at `publicUrl`. */
export function appManifest(publicUrl: string, name: string = DEFAULT_APP_NAME): AppManifest {
  const base = publicUrl.replace(/\/+$/, "");
  const appName = name.trim() || DEFAULT_APP_NAME;
  if (appName.length > APP_NAME_MAX) {
    throw new BadInputError("app_name_too_long", `GitHub allows App names of at most ${APP_NAME_MAX} characters; "${appName}" has ${appName.length}.`);
  }
  return {
    name: appName,
    url: base,
    hook_attributes: { url: `${base}/api/github/webhooks`, active: true },
    redirect_url: `${base}/api/setup/callback`,
    // the dashboard's sign-in (next-auth's GitHub provider) comes back here
    callback_urls: [`${base}/api/auth/callback/github`],
    setup_url: `${base}/setup`,
    public: false,
    default_permissions: { ...APP_PERMISSIONS },
    default_events: [...APP_EVENTS],
  };
}

/** An organization login as GitHub allows it. */
const ORG_LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}$/i;

/**
 * Where the manifest is posted: the person's own new-App page, or an organization's. `state`
 * comes back with the code, tying the callback to this browser.
 */
export function manifestFormAction(host: GitHubHost, organization: string | null, state: string): string {
  const org = organization?.trim() || null;
  if (org !== null && !ORG_LOGIN.test(org)) {
    throw new BadInputError("organization_invalid", `"${org}" is not a GitHub organization name (letters, digits and single hyphens).`);
  }
  const path = org ? `/organizations/${encodeURIComponent(org)}/settings/apps/new` : "/settings/apps/new";
  const url = new URL(`${host.webUrl}${path}`);
  url.searchParams.set("state", state);
  return url.toString();
}

/** The page where an App is installed on accounts and repositories. */
export const installUrl = (htmlUrl: string): string => `${htmlUrl.replace(/\/+$/, "")}/installations/new`;
