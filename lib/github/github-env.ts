import { readFileSync, statSync } from "node:fs";
import { settingsFromDatabase } from "./app-settings";
import type { Db } from "../store/kernel/db";

/**
 * Where GitHub is, for the dashboard's sign-in, its user-token calls and its links: github.com
 * by default; a GitHub Enterprise Server or the sandbox's simulator when GITHUB_WEB_URL /
 * GITHUB_API_URL say so — or, in the sandbox, the App file the simulator wrote
 * (ATELIER_SANDBOX_APP_FILE: webUrl, baseUrl, clientId, clientSecret). The OAuth client is the
 * GitHub App's: GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET, else that file, else the App the
 * manifest flow stored (app_credentials).
 */
export interface GitHubEnv {
  /** Where people browse: /login/oauth/authorize and /login/oauth/access_token live here. */
  webUrl: string;
  /** The REST API root: /user, /user/installations, /repos/… */
  apiUrl: string;
  clientId: string | null;
  clientSecret: string | null;
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "");

interface SandboxFile {
  webUrl?: string;
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
}

let sandboxCache: { path: string; mtimeMs: number; value: SandboxFile } | undefined;

/** The simulator's App file, re-read when it changes; {} when absent or unreadable. */
function sandboxFile(path: string | undefined): SandboxFile {
  if (!path) return {};
  try {
    const { mtimeMs } = statSync(path);
    if (sandboxCache?.path === path && sandboxCache.mtimeMs === mtimeMs) return sandboxCache.value;
    const raw = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    const text = (...names: string[]) => names.map((n) => raw[n]).find((v): v is string => typeof v === "string" && v !== "");
    const value: SandboxFile = {
      webUrl: text("webUrl", "web_url", "baseUrl", "base_url"),
      baseUrl: text("baseUrl", "base_url", "apiUrl", "api_url"),
      clientId: text("clientId", "client_id"),
      clientSecret: text("clientSecret", "client_secret"),
    };
    sandboxCache = { path, mtimeMs, value };
    return value;
  } catch {
    return {};
  }
}

export function gitHubEnv(env: NodeJS.ProcessEnv = process.env): GitHubEnv {
  const sandbox = sandboxFile(env.ATELIER_SANDBOX_APP_FILE);
  return {
    webUrl: trimSlash(env.GITHUB_WEB_URL || sandbox.webUrl || "https://github.com"),
    apiUrl: trimSlash(env.GITHUB_API_URL || sandbox.baseUrl || "https://api.github.com"),
    clientId: env.GITHUB_CLIENT_ID || sandbox.clientId || null,
    clientSecret: env.GITHUB_CLIENT_SECRET || sandbox.clientSecret || null,
  };
}

/**
 * The OAuth client and URLs for sign-in: the environment or the sandbox file, else the App the
 * manifest flow stored in app_credentials (its API base, and github.com or the Enterprise
 * Server its html_url lives on).
 */
export async function resolveGitHubEnv(db: Db, env: NodeJS.ProcessEnv = process.env): Promise<GitHubEnv> {
  const gh = gitHubEnv(env);
  if (gh.clientId && gh.clientSecret) return gh;
  const stored = await settingsFromDatabase(db).catch(() => null);
  if (!stored) return gh;
  return {
    webUrl: env.GITHUB_WEB_URL ? gh.webUrl : (stored.webUrl ?? gh.webUrl),
    apiUrl: env.GITHUB_API_URL ? gh.apiUrl : stored.baseUrl,
    clientId: stored.clientId,
    clientSecret: stored.clientSecret,
  };
}

/** A sentence saying what is missing for sign-in to work, or null when it can work. */
export function signInProblem(gh: GitHubEnv): string | null {
  const missing = [!gh.clientId && "GITHUB_CLIENT_ID", !gh.clientSecret && "GITHUB_CLIENT_SECRET"].filter(Boolean);
  if (missing.length) {
    return `Sign-in needs the GitHub App's OAuth client: set ${missing.join(" and ")} (the App's settings page shows them), create the App from the setup page, or run \`npm start\` without a GitHub App to use the sandbox.`;
  }
  return null;
}
