import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsFromDatabase } from "../../lib/github/app-settings";
import { createGitHubApp } from "../../lib/github/app-client";
import { silentLog } from "../../lib/github/log";
import { startSimulator, type Simulator } from "../../lib/sandbox";
import { gitHubHost, GITHUB_COM } from "../../lib/setup/github-host";
import { APP_EVENTS, APP_PERMISSIONS, appManifest, manifestFormAction } from "../../lib/setup/manifest";
import { completeAppRegistration, setupStatus, startAppRegistration, type SetupDeps } from "../../lib/setup/register-app";
import { manifestPostPage } from "../../lib/setup/setup-pages";
import { openSetupState, sealSetupState, setupCookieOf } from "../../lib/setup/setup-state";
import { issueSetupToken } from "../../lib/setup/setup-token";
import { testDb } from "../support/db";
import { resolveGitHubEnv } from "../../lib/github/github-env";

const db = testDb();
const PUBLIC_URL = "https://atelier.example.com";
const SECRET = "a-test-secret-of-enough-length-0123456789";
const KEY = "a-test-secret-key-for-the-app-credentials";
process.env.ATELIER_SECRET_KEY = KEY;

describe("the App manifest", () => {
  it("is what docs/configuration.md tells one who registers the App by hand: every permission, at its access, and every event", () => {
    const page = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const start = page.indexOf("Registering the App by hand");
    const paragraph = page.slice(start, page.indexOf("\n\n", start)).replace(/\s+/g, " ");
    const names: Record<keyof typeof APP_PERMISSIONS, string> = {
      issues: "Issues",
      pull_requests: "Pull requests",
      contents: "Contents",
      checks: "Checks",
      statuses: "Commit statuses",
      metadata: "Metadata",
      members: "Members",
    };
    const said = (access: "read" | "write") => (access === "write" ? "read and write" : "read");
    // each permission is named in the list that ends with its access
    for (const [key, access] of Object.entries(APP_PERMISSIONS) as [keyof typeof APP_PERMISSIONS, "read" | "write"][]) {
      expect(paragraph, key).toMatch(new RegExp(`${names[key]}[^:;]*: ${said(access)}[;,.]`));
    }
    const from = paragraph.indexOf("the events are ") + "the events are ".length;
    const events = paragraph.slice(from, paragraph.indexOf(".", from));
    for (const event of APP_EVENTS) expect(events, event).toContain(event[0]!.toUpperCase() + event.slice(1).replaceAll("_", " "));
    expect(events.split(/, | and /).length).toBe(APP_EVENTS.length);
  });

  it("points GitHub at this Atelier and asks for what it needs, without the events every App gets anyway", () => {
    const m = appManifest(`${PUBLIC_URL}/`);
    expect(m).toMatchObject({
      name: "Atelier",
      url: PUBLIC_URL,
      hook_attributes: { url: `${PUBLIC_URL}/api/github/webhooks`, active: true },
      redirect_url: `${PUBLIC_URL}/api/setup/callback`,
      callback_urls: [`${PUBLIC_URL}/api/auth/callback/github`],
      public: false,
      default_permissions: { issues: "write", pull_requests: "write", contents: "write", checks: "write", statuses: "read", metadata: "read", members: "read" },
    });
    expect(m.default_events).toEqual([
      "repository",
      "issues",
      "issue_comment",
      "pull_request",
      "pull_request_review",
      "pull_request_review_comment",
      "pull_request_review_thread",
      "label",
      "check_run",
      "check_suite",
      "status",
      "push",
    ]);
    expect(APP_EVENTS).not.toContain("installation");
  });

  it("is posted to the person's or the organization's new-App page, on github.com or a GitHub Enterprise Server", () => {
    expect(manifestFormAction(GITHUB_COM, null, "s1")).toBe("https://github.com/settings/apps/new?state=s1");
    expect(manifestFormAction(GITHUB_COM, "acme", "s1")).toBe("https://github.com/organizations/acme/settings/apps/new?state=s1");
    const ghes = gitHubHost("https://ghe.example.com/", {});
    expect(ghes).toEqual({ webUrl: "https://ghe.example.com", apiUrl: "https://ghe.example.com/api/v3" });
    expect(manifestFormAction(ghes, null, "s")).toBe("https://ghe.example.com/settings/apps/new?state=s");
    expect(gitHubHost("", {})).toEqual(GITHUB_COM);
    expect(gitHubHost("https://github.com", {})).toEqual(GITHUB_COM);
    expect(() => gitHubHost("ftp://x", {})).toThrow(/https/);
    expect(() => manifestFormAction(GITHUB_COM, "../evil", "s")).toThrow(/organization/);
  });

  it("escapes the manifest into the page that posts it", () => {
    const page = manifestPostPage({ action: "https://github.com/settings/apps/new?state=s", manifest: appManifest(PUBLIC_URL, `A"<b>`), cookie: "c", host: GITHUB_COM });
    expect(page).toContain('name="manifest" value="{&quot;name&quot;:&quot;A\\&quot;&lt;b&gt;&quot;');
    expect(page).not.toContain("<b>");
  });

  it("carries the request's CSP nonce on its one inline script, and only a nonce-shaped one", () => {
    const started = { action: "https://github.com/settings/apps/new?state=s", manifest: appManifest(PUBLIC_URL, "A"), cookie: "c", host: GITHUB_COM };
    expect(manifestPostPage(started, "abcDEF123+/=xyz0")).toContain('<script nonce="abcDEF123+/=xyz0">');
    expect(manifestPostPage(started, '"><script>alert(1)</script>')).toContain("<script>document");
    expect(manifestPostPage(started)).toContain("<script>document");
  });

  it("ties GitHub's answer to the browser that started it", () => {
    const { state, cookie } = sealSetupState(GITHUB_COM, SECRET, 1_000);
    expect(openSetupState(cookie, state, SECRET, 2_000)).toEqual(GITHUB_COM);
    expect(() => openSetupState(cookie, "other", SECRET, 2_000)).toThrow(/state does not match/);
    expect(() => openSetupState(cookie, state, "another-secret", 2_000)).toThrow(/not one Atelier signed/);
    expect(() => openSetupState(cookie, state, SECRET, 1_000 + 3_600_001)).toThrow(/hour/);
    expect(() => openSetupState(null, state, SECRET, 2_000)).toThrow(/no registration was started/);
    expect(setupCookieOf(`a=1; atelier_setup=${cookie}; b=2`)).toBe(cookie);
  });
});

describe("registering the App with the sandbox simulator", () => {
  let sim: Simulator;
  let deps: SetupDeps;

  beforeAll(async () => {
    sim = await startSimulator({ seed: "demo" });
    // the only test that touches app_credentials
    await db.pool.query(`DELETE FROM app_credentials`);
    deps = { db, secret: SECRET, secretKey: KEY, publicUrl: PUBLIC_URL, env: { GITHUB_WEB_URL: sim.url, GITHUB_API_URL: sim.url } };
  });
  afterAll(async () => {
    await db.pool.query(`DELETE FROM app_credentials`);
    await sim?.close();
    await db.close();
  });

  it("ends with stored credentials that mint an installation token, and refuses a second registration", async () => {
    expect(await setupStatus(db, deps.env)).toEqual({ tag: "NotRegistered", sandbox: false });
    const started = await startAppRegistration(deps, { githubUrl: sim.url, name: "Atelier Test" }, { viewer: null, token: await issueSetupToken(db) });
    expect(started.action.startsWith(`${sim.url}/settings/apps/new?state=`)).toBe(true);

    // the browser posts the manifest form; GitHub creates the App and redirects back with a code
    const created = await fetch(started.action, {
      method: "POST",
      body: new URLSearchParams({ manifest: JSON.stringify(started.manifest) }),
      redirect: "manual",
    });
    expect(created.status).toBe(302);
    const back = new URL(created.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/api/setup/callback`);

    const forged = { code: back.searchParams.get("code")!, state: "forged", cookie: started.cookie };
    await expect(completeAppRegistration(deps, forged)).rejects.toMatchObject({ token: "setup_state_mismatch" });

    const registration = await completeAppRegistration(deps, {
      code: back.searchParams.get("code")!,
      state: back.searchParams.get("state")!,
      cookie: started.cookie,
    });
    expect(registration).toMatchObject({ appId: sim.app.id, slug: "atelier-test", baseUrl: sim.url });
    expect(registration.installUrl).toBe(`${registration.htmlUrl}/installations/new`);
    expect(JSON.stringify(registration)).not.toContain("PRIVATE KEY");
    expect(sim.state.app.webhookUrl).toBe(`${PUBLIC_URL}/api/github/webhooks`);

    // what Atelier reads at its next start works against GitHub
    const settings = await settingsFromDatabase(db, KEY);
    expect(settings).toMatchObject({ appId: sim.app.id, baseUrl: sim.url, source: "database" });
    const app = createGitHubApp(settings!, { log: silentLog });
    const installationId = sim.state.installationForRepo(sim.state.repoByFullName("demo-org/webapp"))!.id;
    const token = await app.tokens.get(installationId);
    expect(token.token).toBeTruthy();
    const { data } = await app.installationOctokit(installationId).request("GET /installation/repositories");
    expect(data.repositories.map((r: { full_name: string }) => r.full_name)).toContain("demo-org/webapp");

    // and sign-in finds the App's OAuth client there when the environment names none
    const signIn = await resolveGitHubEnv(db, {});
    expect(signIn).toEqual({ webUrl: new URL(registration.htmlUrl).origin, apiUrl: sim.url, clientId: sim.app.clientId, clientSecret: sim.app.clientSecret });

    expect((await setupStatus(db, deps.env)).tag).toBe("Registered");
    await expect(startAppRegistration(deps, {}, { viewer: null, token: await issueSetupToken(db) })).rejects.toMatchObject({ token: "app_already_registered" });
  });

  it("works through the setup routes: the form's cookie comes back with GitHub's redirect", async () => {
    await db.pool.query(`DELETE FROM app_credentials`);
    Object.assign(process.env, { ATELIER_PUBLIC_URL: PUBLIC_URL, GITHUB_WEB_URL: sim.url, GITHUB_API_URL: sim.url, AUTH_SECRET: SECRET });
    delete process.env.GITHUB_APP_ID;
    const { POST } = await import("../../app/api/setup/start/route");
    const { GET } = await import("../../app/api/setup/callback/route");

    const token = await issueSetupToken(db);
    const form = new URLSearchParams({ github: "enterprise", enterpriseUrl: sim.url, organization: "demo-org", name: "Atelier Routes", token });
    const page = await POST(new Request(`${PUBLIC_URL}/api/setup/start`, { method: "POST", body: form, headers: { "sec-fetch-site": "same-origin" } }));
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
    expect(action.startsWith(`${sim.url}/organizations/demo-org/settings/apps/new?state=`)).toBe(true);
    const setCookie = page.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^atelier_setup=[^;]+; Path=\/api\/setup; HttpOnly; SameSite=Lax; Max-Age=3600; Secure$/);

    const manifest = /name="manifest" value="([^"]+)"/.exec(html)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&");
    const created = await fetch(action, { method: "POST", body: new URLSearchParams({ manifest }), redirect: "manual" });
    const callback = await GET(new Request(created.headers.get("location")!, { headers: { cookie: setCookie.split(";")[0]! } }));
    expect(callback.status).toBe(303);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/setup?registered=1`);
    expect(callback.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await setupStatus(db, {})).tag).toBe("Registered");

    const replay = await GET(new Request(created.headers.get("location")!, { headers: { cookie: setCookie.split(";")[0]! } }));
    expect(replay.status).toBe(409);
    const text = await replay.text();
    expect(text).toContain("app_already_registered");
    expect(text).not.toContain("PRIVATE KEY");
  });
});
