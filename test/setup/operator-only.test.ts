import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeViewer } from "../../lib/auth/viewer";
import { gitHubHost, GITHUB_COM } from "../../lib/setup/github-host";
import { appManifest } from "../../lib/setup/manifest";
import { startAppRegistration, type SetupDeps } from "../../lib/setup/register-app";
import { manifestPostPage } from "../../lib/setup/setup-pages";
import { isSetupToken, issueSetupToken } from "../../lib/setup/setup-token";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

// THREATS.md, attack 16: /setup registered an attacker's App, from an attacker-chosen
// "Enterprise Server", with no sign-in. Now only the operator sets Atelier up: whoever holds the
// one-time token the web process printed at start, or a signed-in instance admin.

const PUBLIC_URL = "https://atelier.example.com";
let pdb: PrivateDb;
let deps: SetupDeps;

beforeAll(async () => {
  pdb = await createPrivateDb("setup");
  Object.assign(process.env, {
    DATABASE_URL: pdb.url,
    ATELIER_PUBLIC_URL: PUBLIC_URL,
    AUTH_SECRET: "operator-only-test-secret-0123456789",
    ATELIER_SECRET_KEY: "operator-only-test-key-0123456789",
  });
  for (const name of ["GITHUB_APP_ID", "GITHUB_WEB_URL", "GITHUB_API_URL", "ATELIER_SANDBOX_APP_FILE"]) delete process.env[name];
  deps = { db: pdb.db, secret: "s".repeat(40), secretKey: "k".repeat(40), publicUrl: PUBLIC_URL, env: {} };
}, 60_000);
afterAll(async () => {
  await pdb?.drop();
});

const stored = async () => (await pdb.db.pool.query(`SELECT count(*)::int AS n FROM app_credentials`)).rows[0].n as number;
const tokenHash = async () => (await pdb.db.pool.query(`SELECT token_hash FROM setup_token`)).rows[0]?.token_hash as string | undefined;

async function postForm(fields: Record<string, string>, headers: Record<string, string> = {}) {
  const { POST } = await import("../../app/api/setup/start/route");
  const response = await POST(
    new Request(`${PUBLIC_URL}/api/setup/start`, { method: "POST", body: new URLSearchParams(fields), headers: { "sec-fetch-site": "same-origin", ...headers } }),
  );
  return { status: response.status, text: await response.text(), cookie: response.headers.get("set-cookie") };
}

describe("the setup form, as an outsider", () => {
  it("is refused 403 setup_token_required without the token or an admin's session, and nothing is stored or spent", async () => {
    const token = await issueSetupToken(pdb.db);
    const before = await tokenHash();
    const attempts: Record<string, string>[] = [{ github: "github.com" }, { github: "github.com", token: "guessed-token" }, { github: "github.com", token: "" }];
    for (const fields of attempts) {
      const answer = await postForm(fields);
      expect(answer.status, answer.text).toBe(403);
      expect(answer.text).toContain("setup_token_required");
      expect(answer.cookie).toBeNull();
    }
    // a session cookie of nobody is no admin either
    const forged = await postForm({ github: "github.com" }, { cookie: "authjs.session-token=forged" });
    expect(forged.status).toBe(403);
    expect(await stored()).toBe(0);
    expect(await tokenHash()).toBe(before);
    expect(await isSetupToken(pdb.db, token)).toBe(true);
  });

  it("accepts the token printed at start once: a second use is refused", async () => {
    const token = await issueSetupToken(pdb.db);
    const first = await postForm({ github: "github.com", token });
    expect(first.status, first.text).toBe(200);
    expect(first.text).toContain('action="https://github.com/settings/apps/new?state=');
    expect(first.cookie).toMatch(/^atelier_setup=/);
    const again = await postForm({ github: "github.com", token });
    expect(again.status).toBe(403);
    expect(again.text).toContain("setup_token_required");
    expect(await stored()).toBe(0);
  });

  it("refuses an http or private GitHub Enterprise Server before the token is spent", async () => {
    const token = await issueSetupToken(pdb.db);
    const access = { viewer: null, token };
    const refusals: [string, string][] = [
      ["http://ghe.example.com", "github_url_insecure"],
      ["https://10.1.2.3", "github_url_private"],
      ["https://192.168.0.10", "github_url_private"],
      ["https://169.254.169.254", "github_url_private"],
      ["https://[::1]", "github_url_private"],
      ["https://[::ffff:10.0.0.1]", "github_url_private"],
      ["https://localhost", "github_url_private"],
      ["https://ghe.corp.example", "github_url_private"],
    ];
    const resolve = async (host: string) => (host === "ghe.corp.example" ? [{ address: "172.16.4.2", family: 4 }] : [{ address: "127.0.0.1", family: 4 }]);
    for (const [githubUrl, token] of refusals) {
      await expect(startAppRegistration({ ...deps, resolve }, { githubUrl }, access), githubUrl).rejects.toMatchObject({ token, status: 400 });
    }
    // through the route, too: the page says so, with the token
    const page = await postForm({ github: "enterprise", enterpriseUrl: "http://ghe.example.com", token });
    expect(page.status).toBe(400);
    expect(page.text).toContain("github_url_insecure");
    expect(await isSetupToken(pdb.db, token)).toBe(true);

    // allowed when the operator says so
    const allowed = await startAppRegistration({ ...deps, env: { ATELIER_GHES_ALLOW_PRIVATE: "1" } }, { githubUrl: "https://10.1.2.3" }, access);
    expect(allowed.action.startsWith("https://10.1.2.3/settings/apps/new?state=")).toBe(true);
    expect(await isSetupToken(pdb.db, token)).toBe(false);
    expect(await stored()).toBe(0);
  });

  it("lets a signed-in instance admin register without the token", async () => {
    const admin = makeViewer({ id: "77", login: "the-admin", name: null, avatarUrl: null }, null, new Set(["77"]));
    const someone = makeViewer({ id: "78", login: "someone", name: null, avatarUrl: null }, null, new Set(["77"]));
    await expect(startAppRegistration(deps, {}, { viewer: someone, token: null })).rejects.toMatchObject({ token: "setup_token_required", status: 403 });
    const started = await startAppRegistration(deps, {}, { viewer: admin, token: null });
    expect(started.host).toEqual(GITHUB_COM);
  });

  it("offers no setup while the sandbox runs", async () => {
    const token = await issueSetupToken(pdb.db);
    await expect(startAppRegistration({ ...deps, env: { ATELIER_SANDBOX_APP_FILE: "/tmp/sandbox-app.json" } }, {}, { viewer: null, token })).rejects.toMatchObject({
      token: "setup_unavailable_in_sandbox",
      status: 409,
    });
    expect(await isSetupToken(pdb.db, token)).toBe(true);
  });
});

describe("the page that hands the manifest over", () => {
  it("shows a GitHub Enterprise Server's host and waits for the person's click; github.com goes on by itself", () => {
    const ghes = gitHubHost("https://ghe.example.com", {});
    const manifest = appManifest(PUBLIC_URL);
    const toGhes = manifestPostPage({ action: "https://ghe.example.com/settings/apps/new?state=s", manifest, cookie: "c", host: ghes }, "abcDEF123+/=xyz0");
    expect(toGhes).toContain("<strong data-host>ghe.example.com</strong>");
    expect(toGhes).toContain("Continue to ghe.example.com");
    expect(toGhes).not.toContain("<script");
    const toCom = manifestPostPage({ action: "https://github.com/settings/apps/new?state=s", manifest, cookie: "c", host: GITHUB_COM }, "abcDEF123+/=xyz0");
    expect(toCom).toContain("<strong data-host>github.com</strong>");
    expect(toCom).toContain('<script nonce="abcDEF123+/=xyz0">');
  });
});
