import { ForbiddenError } from "../errors";

/**
 * Cross-site request forgery guard for every state-changing request of the API: a browser
 * says where a request comes from (Sec-Fetch-Site, else Origin), and only the dashboard's own
 * origin may change anything. A request with neither header did not come from a browser page
 * (curl, a script); the session cookie is SameSite=Lax besides, so a cross-site form post never
 * carries it. The sign-in routes use next-auth's own CSRF token.
 */

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function assertSameOrigin(method: string, headers: Headers): void {
  if (SAFE.has(method.toUpperCase())) return;
  const site = headers.get("sec-fetch-site");
  if (site) {
    if (site === "same-origin" || site === "none") return;
    throw refused(`the browser says it came from a ${site} page`);
  }
  const origin = headers.get("origin");
  if (origin === null) return;
  const host = (headers.get("x-forwarded-host") ?? headers.get("host") ?? "").split(",")[0]!.trim().toLowerCase();
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    throw refused(`its Origin is ${origin}`);
  }
  if (!host || originHost !== host) throw refused(`it came from ${origin}`);
}

function refused(why: string): ForbiddenError {
  return new ForbiddenError(
    "cross_origin_request",
    `Refused a state-changing request that did not come from this dashboard (${why}).`,
  );
}
