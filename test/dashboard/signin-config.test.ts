import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";

// An instance config that does not validate refuses every sign-in: the sign-in page says what is
// wrong and where (the file, the key, its line), not "GitHub did not let you in". The real web
// process (next start), with a GitHub App's OAuth client so that nothing else is missing.

let web: WebServer;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "atelier-signin-config-"));
  file = join(dir, "atelier.config.yml");
  writeFileSync(file, "admins: [octo-admin]\nboard:\n  lanes: not-a-list\n");
  web = await startWebServer(webServerEnv("signin-config", { ATELIER_CONFIG: file, GITHUB_CLIENT_ID: "Iv1.signin", GITHUB_CLIENT_SECRET: "signin-secret" }));
}, 300_000);

afterAll(async () => {
  await web?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("the sign-in page names the instance config's file and problem, and offers no sign-in that would fail", async () => {
  const res = await fetch(`${web.url}/signin`, { redirect: "manual" });
  expect(res.status).toBe(200);
  const html = await res.text();
  expect(html).toContain(`${file} is not valid`);
  expect(html).toMatch(/lanes/);
  expect(html).not.toContain('data-testid="signin-github"');
  expect(html).not.toContain("GitHub did not let you in");
});
