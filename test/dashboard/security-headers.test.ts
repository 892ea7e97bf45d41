import { NextRequest } from "next/server";
import { afterEach, describe, expect, it } from "vitest";
import { assertSameOrigin } from "../../lib/auth/csrf";
import { proxy } from "../../proxy";

// Headers (THREATS.md, attack 20): the Proxy that runs before every page and route, called as
// Next.js calls it, for a page and for an API route.

const saved = { ...process.env };
afterEach(() => {
  for (const k of ["ATELIER_PUBLIC_URL", "AUTH_URL", "ATELIER_TRUST_PROXY"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

const through = (url: string, headers: Record<string, string> = {}) => proxy(new NextRequest(url, { headers }));
const directive = (csp: string, name: string) => csp.split(";").map((d) => d.trim()).find((d) => d.startsWith(`${name} `)) ?? "";

describe("security headers", () => {
  for (const path of ["/board", "/api/v1/me"]) {
    it(`${path}: a nonce CSP with no inline scripts, no framing, nosniff, same-origin referrer; no HSTS over http`, async () => {
      delete process.env.ATELIER_PUBLIC_URL;
      delete process.env.AUTH_URL;
      const res = await through(`http://localhost:3000${path}`);
      const csp = res.headers.get("content-security-policy") ?? "";
      const script = directive(csp, "script-src");
      expect(script).toMatch(/'nonce-[A-Za-z0-9+/=]{20,}'/);
      expect(script).toContain("'strict-dynamic'");
      expect(script).not.toContain("'unsafe-inline'");
      expect(directive(csp, "frame-ancestors")).toBe("frame-ancestors 'none'");
      expect(directive(csp, "object-src")).toBe("object-src 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("strict-transport-security")).toBeNull();
      // Next.js reads the nonce from the request's CSP, which the Proxy hands on
      expect(res.headers.get("x-middleware-request-content-security-policy")).toBe(csp);
      expect(res.headers.get("x-middleware-request-x-nonce")).toBe(/'nonce-([^']+)'/.exec(script)![1]);
    });
  }

  it("a fresh nonce for every request", async () => {
    const a = (await through("http://localhost:3000/board")).headers.get("content-security-policy");
    const b = (await through("http://localhost:3000/board")).headers.get("content-security-policy");
    expect(a).not.toBe(b);
  });

  it("HSTS only when the dashboard is served over https", async () => {
    process.env.ATELIER_PUBLIC_URL = "https://atelier.example.com";
    expect((await through("http://localhost:3000/board")).headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
    process.env.ATELIER_PUBLIC_URL = "http://localhost:3000";
    expect((await through("http://localhost:3000/board")).headers.get("strict-transport-security")).toBeNull();
    // a client's X-Forwarded-Proto is not believed without ATELIER_TRUST_PROXY
    delete process.env.ATELIER_PUBLIC_URL;
    expect((await through("http://localhost:3000/board", { "x-forwarded-proto": "https" })).headers.get("strict-transport-security")).toBeNull();
    process.env.ATELIER_TRUST_PROXY = "1";
    expect((await through("http://localhost:3000/board", { "x-forwarded-proto": "https" })).headers.get("strict-transport-security")).not.toBeNull();
  });
});

describe("X-Forwarded-Host", () => {
  const write = (extra: Record<string, string>) => new Headers({ host: "atelier.internal:3000", origin: "http://evil.example", ...extra });

  it("is not trusted by the CSRF check unless ATELIER_TRUST_PROXY=1", async () => {
    // a cross-site page that sets X-Forwarded-Host to its own host is still refused
    expect(() => assertSameOrigin("POST", write({ "x-forwarded-host": "evil.example" }), {})).toThrow(/did not come from this dashboard/);
    // behind a proxy the operator declared, its X-Forwarded-Host names the dashboard
    const proxied = new Headers({ host: "10.0.0.5:3000", origin: "https://atelier.example.com", "x-forwarded-host": "atelier.example.com" });
    expect(() => assertSameOrigin("POST", proxied, {})).toThrow();
    expect(() => assertSameOrigin("POST", proxied, { ATELIER_TRUST_PROXY: "1" })).not.toThrow();
    // the Host itself is always the dashboard's
    expect(() => assertSameOrigin("POST", new Headers({ host: "atelier.internal:3000", origin: "http://atelier.internal:3000" }), {})).not.toThrow();
  });
});
