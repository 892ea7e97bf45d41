import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

const run = promisify(execFile);
let pdb: PrivateDb;

beforeAll(async () => {
  pdb = await createPrivateDb("appsource");
});
afterAll(async () => {
  await pdb?.drop();
});

/** What `npm start` decides: `scripts/app-source.ts`, run as start.sh runs it. */
async function appSource(env: Record<string, string> = {}): Promise<string> {
  const base: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: pdb.url,
    GITHUB_APP_ID: undefined,
    ATELIER_PUBLIC_URL: undefined,
    ATELIER_SANDBOX: undefined,
    ATELIER_SECRET_KEY: "app-source-test-key-0123456789",
  };
  const { stdout } = await run("npx", ["tsx", "scripts/app-source.ts"], { env: { ...base, ...env } });
  return stdout.trim();
}

it("npm start runs the sandbox only when no App is in the environment and none was registered from /setup", async () => {
  expect(await appSource()).toBe("sandbox");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  await pdb.db.pool.query(
    `INSERT INTO app_credentials (id, app_id, slug, private_key, webhook_secret, client_id, client_secret, html_url, base_url)
     VALUES (1, 42, 'atelier-test', $1, 'whsec', 'Iv1.x', 'cs', 'https://github.com/apps/atelier-test', 'https://api.github.com')`,
    [privateKey.export({ type: "pkcs1", format: "pem" }).toString()],
  );
  expect(await appSource()).toBe("database");
  expect(await appSource({ GITHUB_APP_ID: "7" })).toBe("env");
}, 240_000);

it("with no App, a public URL that is not local stops the start with one sentence instead of running the simulator", async () => {
  await pdb.db.pool.query(`DELETE FROM app_credentials`);
  const refused = appSource({ ATELIER_PUBLIC_URL: "https://atelier.example.com" });
  await expect(refused).rejects.toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("is not local, so the sandbox simulator does not start") });
  expect(await appSource({ ATELIER_PUBLIC_URL: "https://atelier.example.com", ATELIER_SANDBOX: "1" })).toBe("sandbox");
  expect(await appSource({ ATELIER_PUBLIC_URL: "https://atelier.example.com", ATELIER_SANDBOX: "0" })).toBe("setup");
}, 240_000);

it("stored credentials that do not validate stop the start with the reason", async () => {
  await pdb.db.pool.query(
    `INSERT INTO app_credentials (id, app_id, slug, private_key, webhook_secret, client_id, client_secret, html_url, base_url)
     VALUES (1, 42, 'atelier-test', 'not a key', 'whsec', 'Iv1.x', 'cs', 'https://github.com/apps/atelier-test', 'https://api.github.com')`,
  );
  await expect(appSource()).rejects.toMatchObject({ stderr: expect.stringContaining("app_credentials.private_key") });
}, 240_000);
