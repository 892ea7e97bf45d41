// Next.js's Proxy (the successor of middleware): runs before every page and route. It sets the
// security headers of lib/http/security-headers.ts on the answer, and hands the request's CSP
// (with its fresh nonce) to Next.js, which puts the nonce on the scripts it renders.
import { NextResponse, type NextRequest } from "next/server";
import { newNonce, securityHeaders, servedOverHttps } from "./lib/http/security-headers";

export function proxy(request: NextRequest): NextResponse {
  const nonce = newNonce();
  const headers = securityHeaders({ nonce, https: servedOverHttps(request.url, request.headers), dev: process.env.NODE_ENV === "development" });
  const forwarded = new Headers(request.headers);
  forwarded.set("x-nonce", nonce);
  forwarded.set("content-security-policy", headers["content-security-policy"]!);
  const response = NextResponse.next({ request: { headers: forwarded } });
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  // everything but Next's static files (immutable, served as they are)
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico).*)" }],
};
