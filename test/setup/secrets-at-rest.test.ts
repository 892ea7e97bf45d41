import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSession, storeUserToken } from "../../lib/auth/sessions";
import { settingsFromDatabase } from "../../lib/github/app-settings";
import { startSimulator, type Simulator } from "../../lib/sandbox";
import { completeAppRegistration, startAppRegistration, type SetupDeps } from "../../lib/setup/register-app";
import { issueSetupToken } from "../../lib/setup/setup-token";
import { getSessionAndUser } from "../../lib/store/people/session-rows";
import { upsertUser } from "../../lib/store/people/users";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

// THREATS.md, attack 17: the App key, webhook and client secrets, and session tokens sat in
// Postgres in plain text. A dump of the database after a registration and a sign-in must hold
// none of them as issued.

const run = promisify(execFile);
const KEY = "secrets-at-rest-test-key-0123456789abcdef";
let pdb: PrivateDb;
let sim: Simulator;

beforeAll(async () => {
  pdb = await createPrivateDb("secrets");
  sim = await startSimulator({ seed: "demo" });
}, 60_000);
afterAll(async () => {
  await sim?.close();
  await pdb?.drop();
});

const dump = async (): Promise<string> => (await run("pg_dump", ["--data-only", pdb.url], { maxBuffer: 64 * 1024 * 1024 })).stdout;

/** The lines of a PEM's body: any one of them in a dump would be the key, however it is framed. */
const pemLines = (pem: string): string[] => pem.split("\n").filter((l) => l.length >= 40 && !l.startsWith("-----"));

describe("a table dump after a setup and a sign-in", () => {
  it("holds no PEM, no webhook or client secret, no session token or GitHub token as issued", async () => {
    const deps: SetupDeps = { db: pdb.db, secret: "s".repeat(40), secretKey: KEY, publicUrl: "https://atelier.example.com", env: { GITHUB_WEB_URL: sim.url, GITHUB_API_URL: sim.url } };
    const started = await startAppRegistration(deps, { githubUrl: sim.url }, { viewer: null, token: await issueSetupToken(pdb.db) });
    const created = await fetch(started.action, { method: "POST", body: new URLSearchParams({ manifest: JSON.stringify(started.manifest) }), redirect: "manual" });
    const back = new URL(created.headers.get("location")!);
    await completeAppRegistration(deps, { code: back.searchParams.get("code")!, state: back.searchParams.get("state")!, cookie: started.cookie });

    // the sign-in library stores the user, their sealed GitHub token and a session through these
    const user = await upsertUser(pdb.db, { githubId: "5150", login: "octo-admin", name: null, avatarUrl: null });
    await storeUserToken(pdb.db, user.id, "gho_plainGitHubTokenOfTheUser0123", "auth-secret-of-the-test-0123456789");
    const session = await openSession(pdb.db, user.id);

    const settings = (await settingsFromDatabase(pdb.db, KEY))!;
    expect(settings.privateKey).toContain("PRIVATE KEY");
    const text = await dump();
    expect(text).toContain("octo-admin"); // the dump is of the right database
    expect(text).not.toContain("PRIVATE KEY");
    for (const line of pemLines(settings.privateKey)) expect(text).not.toContain(line);
    expect(text).not.toContain(settings.webhookSecret);
    expect(text).not.toContain(settings.clientSecret!);
    expect(text).not.toContain(session.sessionToken);
    expect(text).not.toContain("gho_plainGitHubTokenOfTheUser0123");
    // and the session still opens with the token the browser holds
    expect((await getSessionAndUser(pdb.db, session.sessionToken))?.user.login).toBe("octo-admin");
    expect(await getSessionAndUser(pdb.db, "another-token")).toBeNull();
  });

  it("a wrong ATELIER_SECRET_KEY is a clear error, never garbage", async () => {
    await expect(settingsFromDatabase(pdb.db, "another-key-entirely-0123456789abcdef")).rejects.toMatchObject({
      token: "secret_key_mismatch",
      message: expect.stringContaining("app_credentials.private_key"),
    });
    await pdb.db.pool.query(`UPDATE app_credentials SET webhook_secret = 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA' WHERE id = 1`);
    await expect(settingsFromDatabase(pdb.db, KEY)).rejects.toMatchObject({ token: "secret_key_mismatch", message: expect.stringContaining("webhook_secret") });
  });

  it("credentials stored in plain text before sealing are sealed on their first read", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
    await pdb.db.pool.query(`UPDATE app_credentials SET private_key = $1, webhook_secret = 'whsec-plain-0123', client_secret = 'cs-plain-0123' WHERE id = 1`, [pem]);
    const settings = (await settingsFromDatabase(pdb.db, KEY))!;
    expect(settings).toMatchObject({ privateKey: pem, webhookSecret: "whsec-plain-0123", clientSecret: "cs-plain-0123" });
    const text = await dump();
    expect(text).not.toContain("PRIVATE KEY");
    expect(text).not.toContain("whsec-plain-0123");
    expect(text).not.toContain("cs-plain-0123");
    expect((await settingsFromDatabase(pdb.db, KEY))!.webhookSecret).toBe("whsec-plain-0123");
  });

  it("the migration hashes the sessions stored before it, and they keep working", async () => {
    const user = await upsertUser(pdb.db, { githubId: "5151", login: "old-session", name: null, avatarUrl: null });
    await pdb.db.pool.query(`DELETE FROM sessions`);
    await pdb.db.pool.query(`INSERT INTO sessions (session_token, user_id, expires) VALUES ('token-issued-before-hashing', $1, now() + interval '1 day')`, [user.id]);
    const sql = readFileSync("prisma/migrations/20261201310000_hardened_secrets/migration.sql", "utf8").split("-- The one-time setup token")[0]!;
    await pdb.db.pool.query(sql);
    expect(await dump()).not.toContain("token-issued-before-hashing");
    expect((await getSessionAndUser(pdb.db, "token-issued-before-hashing"))?.user.login).toBe("old-session");
  });
});
