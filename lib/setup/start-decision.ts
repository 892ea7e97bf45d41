import { publicUrl } from "./public-url";

/** Where the GitHub App comes from: the environment, the /setup page's registration, or nowhere yet. */
export type AppSource = "env" | "database" | "none";

/**
 * What `npm start` runs against: a real App (from the environment or the database), the
 * sandbox simulator, or nothing yet — "setup": the dashboard only, whose start prints the
 * one-time link to /setup (no worker: it has no App to act as).
 */
export type StartDecision = { run: "env" | "database" | "sandbox" | "setup" } | { refuse: string };

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether a URL names this machine only (localhost, 127.0.0.1, [::1]): nobody else can reach it. */
export function isLocalUrl(url: string): boolean {
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname.toLowerCase());
  } catch {
    return false;
  }
}

/**
 * The simulator runs only on purpose: with ATELIER_SANDBOX=1, or with no App at all on an
 * instance whose public URL is local (a newcomer's first `npm start`). ATELIER_SANDBOX=0 starts
 * with no App and no simulator, to register the App from /setup. An instance meant to be
 * reached by others (a public URL that is not local) with no App and neither setting stops
 * with one sentence instead of silently running against a fake GitHub.
 */
export function startDecision(source: AppSource, env: NodeJS.ProcessEnv = process.env): StartDecision {
  if (source === "env") return { run: "env" };
  if (env.ATELIER_SANDBOX === "1") return { run: "sandbox" };
  if (source === "database") return { run: "database" };
  if (env.ATELIER_SANDBOX === "0") return { run: "setup" };
  const url = publicUrl(env);
  if (isLocalUrl(url)) return { run: "sandbox" };
  return {
    refuse: `atelier: no GitHub App is configured and ATELIER_PUBLIC_URL (${url}) is not local, so the sandbox simulator does not start: set GITHUB_APP_ID and its settings, or ATELIER_SANDBOX=0 to start without an App and register one from /setup, or ATELIER_SANDBOX=1 to run against the simulator anyway.`,
  };
}
