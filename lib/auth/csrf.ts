import { ForbiddenError } from "../errors";
import { trustProxyHeaders } from "../http/security-headers";

/**
 * Cross-site request forgery guard for every state-changing request of the API: a browser
 * says where a request comes from (Sec-Fetch-Site, else Origin), and only the dashboard's own
 * origin may change anything. A request with neither header did not come from a browser page
 * (curl, a script); the session cookie is SameSite=Lax besides, so a cross-site form post never
 * carries it. The sign-in routes use next-auth's own CSRF token. The dashboard's host is the
 * Host header; X-Forwarded-Host only with ATELIER_TRUST_PROXY=1 (behind a reverse proxy that
 * sets it), since any client can send one.
 */

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function assertSameOrigin(method: string, headers: Headers, env: NodeJS.ProcessEnv = process.env): void {
  if (SAFE.has(method.toUpperCase())) return;
  const site = headers.get("sec-fetch-site");
  if (site) {
    if (site === "same-origin" || site === "none") return;
    throw refused(`the browser says it came from a ${site} page`);
  }
  const origin = headers.get("origin");
  if (origin === null) return;
  // X-Forwarded-Host is the client's to write unless a reverse proxy of the operator's sets it
  const forwarded = trustProxyHeaders(env) ? headers.get("x-forwarded-host") : null;
  const host = (forwarded ?? headers.get("host") ?? "").split(",")[0]!.trim().toLowerCase();
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
