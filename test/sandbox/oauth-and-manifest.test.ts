import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api, probotFor } from "./support/probot";

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
});

async function authorize(query: Record<string, string>): Promise<Response> {
  return fetch(`${sim.url}/login/oauth/authorize?${new URLSearchParams(query).toString()}`, { redirect: "manual" });
}

describe("OAuth web flow for the dashboard", () => {
  const redirectUri = "http://localhost:3000/api/auth/callback/github";

  it("authorize redirects with code and state; the code becomes a token that /user accepts", async () => {
    const res = await authorize({ client_id: sim.app.clientId, redirect_uri: redirectUri, state: "xyz", login: "octo-writer" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get("state")).toBe("xyz");
    const code = location.searchParams.get("code") ?? "";
    const exchange = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ client_id: sim.app.clientId, client_secret: sim.app.clientSecret, code, redirect_uri: redirectUri }),
    });
    const body = (await exchange.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe("bearer");
    const user = (await (await api(sim, "/user", { token: body.access_token })).json()) as { login: string };
    expect(user.login).toBe("octo-writer");

    const reused = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ client_id: sim.app.clientId, client_secret: sim.app.clientSecret, code }),
    });
    expect(await reused.json()).toMatchObject({ error: "bad_verification_code" });
  });

  it("answers a form with a form (GitHub's default), signs in the default user, and refuses a wrong secret", async () => {
    const res = await authorize({ client_id: sim.app.clientId, redirect_uri: redirectUri });
    const code = new URL(res.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const exchange = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: sim.app.clientId, client_secret: sim.app.clientSecret, code }).toString(),
    });
    expect(exchange.headers.get("content-type")).toMatch(/x-www-form-urlencoded/);
    const token = new URLSearchParams(await exchange.text()).get("access_token") ?? "";
    expect(((await (await api(sim, "/user", { token })).json()) as { login: string }).login).toBe("octo-admin");
    const wrong = await fetch(`${sim.url}/login/oauth/access_token`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ client_id: sim.app.clientId, client_secret: "nope", code: "x" }),
    });
    expect(await wrong.json()).toMatchObject({ error: "incorrect_client_credentials" });
    expect((await authorize({ client_id: "someone-else", redirect_uri: redirectUri })).status).toBe(404);
  });
});

describe("App manifest flow", () => {
  it("the new-app page redirects with a code that converts once into the App's credentials", async () => {
    const manifest = {
      name: "My Atelier",
      url: "http://localhost:3000",
      hook_attributes: { url: "http://localhost:3000/api/github/webhooks" },
      redirect_url: "http://localhost:3000/setup/done",
      callback_urls: ["http://localhost:3000/api/auth/callback/github"],
      default_permissions: { issues: "write", pull_requests: "write", contents: "write", checks: "write", metadata: "read" },
      default_events: ["issues", "pull_request", "issue_comment", "check_run", "label"],
    };
    const res = await fetch(`${sim.url}/settings/apps/new?${new URLSearchParams({ manifest: JSON.stringify(manifest), state: "s1" }).toString()}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") ?? "");
    expect(location.pathname).toBe("/setup/done");
    expect(location.searchParams.get("state")).toBe("s1");
    const code = location.searchParams.get("code") ?? "";
    const conversion = await fetch(`${sim.url}/app-manifests/${code}/conversions`, { method: "POST" });
    expect(conversion.status).toBe(201);
    const app = (await conversion.json()) as Record<string, unknown>;
    expect(app).toMatchObject({ id: sim.app.id, slug: "my-atelier", name: "My Atelier", client_id: sim.app.clientId, client_secret: sim.app.clientSecret, webhook_secret: sim.app.webhookSecret });
    expect(app.pem).toBe(sim.app.privateKey);
    expect(String(app.html_url)).toContain("/apps/my-atelier");
    expect((await fetch(`${sim.url}/app-manifests/${code}/conversions`, { method: "POST" })).status).toBe(404);
    expect(sim.state.app.webhookUrl).toBe("http://localhost:3000/api/github/webhooks");
    sim.setWebhookUrl({ url: null });
  });

  it("accepts the manifest as a POSTed form, like GitHub's page", async () => {
    const res = await fetch(`${sim.url}/organizations/demo-org/settings/apps/new`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ manifest: JSON.stringify({ name: "My Atelier", redirect_url: "http://localhost:3000/cb" }) }).toString(),
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^http:\/\/localhost:3000\/cb\?code=/);
  });
});

describe("App JWT and the simulator clock", () => {
  it("Probot keeps working after the clock jumps: auth-app corrects its JWT from the Date header", async () => {
    sim.advanceClock({ ms: 2 * 60 * 60 * 1000 });
    const app = await probotFor(sim).auth();
    const { data } = await app.request("GET /app");
    expect(data?.id).toBe(sim.app.id);
  });
});
