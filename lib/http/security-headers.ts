/**
 * The response headers every answer of the web process carries (set by proxy.ts, before any
 * page or route runs): a Content-Security-Policy whose scripts are only those carrying this
 * request's nonce (Next.js puts it on its own scripts; 'strict-dynamic' lets them load the
 * chunks they need), no framing by anyone, no MIME sniffing, the Referer kept to this origin,
 * and HSTS when — only when — the dashboard is served over https.
 */
export interface SecurityHeaderOptions {
  /** A fresh random nonce for this request (base64). */
  nonce: string;
  /** The dashboard is served over https (its public URL, or the request's scheme). */
  https: boolean;
  /** `next dev` evaluates code at run time (React's debugging): 'unsafe-eval' there only. */
  dev?: boolean;
}

export function contentSecurityPolicy({ nonce, https, dev = false }: SecurityHeaderOptions): string {
  const directives = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // React's style attributes and Next's injected <style> tags; no script can ride on a style
    "style-src 'self' 'unsafe-inline'",
    // avatars come from GitHub, GitHub Enterprise Server or the simulator: any image source
    "img-src * data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    // no form-action: the setup page posts the App manifest to the GitHub it was given
    "frame-ancestors 'none'",
    ...(https ? ["upgrade-insecure-requests"] : []),
  ];
  return directives.join("; ");
}

export function securityHeaders(options: SecurityHeaderOptions): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(options),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    ...(options.https ? { "strict-transport-security": "max-age=31536000; includeSubDomains" } : {}),
  };
}

/** A nonce for one request: 16 random bytes, base64. */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

/**
 * Whether the dashboard is served over https: its configured public URL (ATELIER_PUBLIC_URL,
 * else AUTH_URL) says so when set; else the request's own URL. A client-sent
 * X-Forwarded-Proto counts only when ATELIER_TRUST_PROXY=1 (a reverse proxy sets it).
 */
export function servedOverHttps(requestUrl: string, headers: Headers, env: NodeJS.ProcessEnv = process.env): boolean {
  const configured = env.ATELIER_PUBLIC_URL || env.AUTH_URL;
  if (configured) {
    try {
      return new URL(configured).protocol === "https:";
    } catch {
      /* an unparsable setting is reported where it is used */
    }
  }
  if (trustProxyHeaders(env) && headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https") return true;
  try {
    return new URL(requestUrl).protocol === "https:";
  } catch {
    return false;
  }
}

/** ATELIER_TRUST_PROXY=1: X-Forwarded-Host and X-Forwarded-Proto come from a reverse proxy of the operator's, not from the client. */
export const trustProxyHeaders = (env: NodeJS.ProcessEnv = process.env): boolean => env.ATELIER_TRUST_PROXY === "1";
