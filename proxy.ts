// Next.js's Proxy (the successor of middleware): runs before every page and route. It sets the
// security headers of lib/http/security-headers.ts on the answer, and hands the request's CSP
// (with its fresh nonce) to Next.js, which puts the nonce on the scripts it renders. A page
// asked for while Postgres is unreachable is answered 503 `database_unavailable` with
// Retry-After before it renders. The API answers its own 503s, and the probes answer for
// themselves: /healthz says the process lives whatever Postgres does (a liveness probe that
// failed with the database would have the web restarted through every outage), /readyz and
// /metrics say what is away in their own format. A path whose percent-encoding is broken
// (`/runs/%E0%A4%A`) is a 400 `invalid_path` here: Next.js fails on it with a 500 before any
// page or route could refuse it. While the process stops (SIGTERM), every page and API call is
// a 503 `server_draining` with Retry-After (lib/http/draining.ts); /healthz still lives and
// /readyz says not ready.
import { NextResponse, type NextRequest } from "next/server";
import { decoded } from "./lib/http/url-ids";
import { databaseOutagePage } from "./lib/http/outage-page";
import { newNonce, securityHeaders, servedOverHttps } from "./lib/http/security-headers";
import { databaseReachable } from "./lib/store/kernel/database-reachable";
import { drainingError, isDraining } from "./lib/http/draining";
import { toHttpError } from "./lib/errors";

const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

const isPage = (pathname: string): boolean => !pathname.startsWith("/api/") && !pathname.startsWith("/_next/") && !PROBES.has(pathname);

export async function proxy(request: NextRequest): Promise<NextResponse> {
  const nonce = newNonce();
  const headers = securityHeaders({ nonce, https: servedOverHttps(request.url, request.headers), dev: process.env.NODE_ENV === "development" });
  let response: NextResponse;
  if (isDraining() && request.nextUrl.pathname !== "/healthz") {
    const answer = toHttpError(drainingError());
    response = NextResponse.json(answer.body, { status: answer.status, headers: answer.headers });
  } else if (decoded(request.nextUrl.pathname) === null) {
    response = NextResponse.json({ error: "invalid_path", message: "The path is not valid: its percent-encoding is broken." }, { status: 400 });
  } else if (isPage(request.nextUrl.pathname) && !(await databaseReachable())) {
    const outage = databaseOutagePage();
    response = new NextResponse(outage.html, { status: outage.status, headers: outage.headers });
  } else {
    const forwarded = new Headers(request.headers);
    forwarded.set("x-nonce", nonce);
    forwarded.set("content-security-policy", headers["content-security-policy"]!);
    response = NextResponse.next({ request: { headers: forwarded } });
  }
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  // everything but Next's static files (immutable, served as they are) and the webhook
  // receiver: for a request the Proxy sees, Next.js copies the body in memory (up to 10 MB,
  // cut beyond), which a forged 60 MB delivery must not cost; that route sets its own headers
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico|api/github/webhooks).*)" }],
};
