import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { authSecret } from "../../lib/auth/auth-secret";
import { keptSecret } from "../../lib/secrets/kept-secret";

const dir = mkdtempSync(join(tmpdir(), "atelier-auth-secret-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the sign-in secret with no AUTH_SECRET set", () => {
  it("is generated once, kept 0600, and the same for every part of the process that asks (Next bundles each apart)", () => {
    const file = join(dir, "state", "auth-secret");
    const made: string[] = [];
    const first = keptSecret(file, (f) => made.push(f));
    // a second copy of the module, as another Next bundle has, finds the same secret
    const second = keptSecret(file, (f) => made.push(f));
    expect(second).toBe(first);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made).toEqual([file]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(authSecret({ ATELIER_AUTH_SECRET_FILE: file })).toBe(first);
  });

  it("AUTH_SECRET wins when it is set", () => {
    expect(authSecret({ AUTH_SECRET: "from-the-environment", ATELIER_AUTH_SECRET_FILE: join(dir, "unused") })).toBe("from-the-environment");
  });
});
