import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The migrations of ADR 0070 and 0071 on data written before them: each row gets the id of the
 * repository that held its name when it was written; the rows of a repository retired before
 * (its row named `<name>#<id>`, its rows still under the bare name) move to its retired name;
 * a row no repository ever held the name of is kept under `<name>#unowned`; the admins resolved
 * so far are kept (on an unknown host when the App's credentials are not stored).
 */

const ROOT = resolve(__dirname, "../..");
const BASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
const FIRST = "20261208010000_repository_identity";
const schema = `mig_${randomBytes(5).toString("hex")}`;
let client: pg.Client;

const migrations = () => readdirSync(join(ROOT, "prisma/migrations")).filter((n) => /^\d/.test(n)).sort();
const apply = async (names: string[]) => {
  for (const name of names) await client.query(readFileSync(join(ROOT, "prisma/migrations", name, "migration.sql"), "utf8"));
};
const key = (repo: string, n: number) => JSON.stringify(["github", repo, n]);

async function legacyRun(id: string, repo: string, number: number, createdAt: string): Promise<void> {
  const eventId = JSON.stringify(["start-dev", repo, number, id]);
  await client.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission, received_at) VALUES ($1, 'item', 'start-dev', $2, $3, $4, 'Claimed', $5, '{}', $6)`,
    [eventId, repo, key(repo, number), number, id, createdAt],
  );
  await client.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, created_at)
     VALUES ($1, $2, 'start-dev', $3, $4, $5, 'Failed', 'demo', 'p', false, $6, $6)`,
    [id, eventId, repo, key(repo, number), number, createdAt],
  );
}

beforeAll(async () => {
  client = new pg.Client({ connectionString: BASE_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`SET search_path TO "${schema}"`);
  const all = migrations();
  await apply(all.slice(0, all.indexOf(FIRST)));
  await client.query(`INSERT INTO installations (id, account_login, updated_at) VALUES (1, 'org', now())`);
  // org/x was deleted and created again: the old row was retired as org/x#10, its rows were not
  await client.query(
    `INSERT INTO repositories (id, installation_id, full_name, removed_at, created_at, updated_at) VALUES
       (10, 1, 'org/x#10', '2026-11-10', '2026-11-01', now()), (20, 1, 'org/x', NULL, '2026-11-20', now())`,
  );
  await legacyRun("run-old", "org/x", 5, "2026-11-05");
  await legacyRun("run-new", "org/x", 6, "2026-11-25");
  await legacyRun("run-none", "org/z", 1, "2026-11-25");
  await client.query(`INSERT INTO items (key, repo, number, kind, state, title, projection, content_hash, observed_at) VALUES ($1, 'org/x', 6, 'issue', 'open', 't', '{}', 'h', '2026-11-25')`, [key("org/x", 6)]);
  await client.query(`INSERT INTO audit_log (actor, action, repo, at) VALUES ('a', 'retry', 'org/x', '2026-11-05')`);
  await client.query(`INSERT INTO instance_admins (login, github_id) VALUES ('boss', '42')`);
  await apply(all.slice(all.indexOf(FIRST)));
});

afterAll(async () => {
  await client.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
  await client.end();
});

describe("the repository identity migrations on existing rows", () => {
  it("give each row the repository that held its name when it was written, and move a retired one's rows to its retired name", async () => {
    const { rows } = await client.query<{ id: string; repo: string; item_key: string; repository_id: string | null }>(
      `SELECT id, repo, item_key, repository_id::text FROM runs ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: "run-new", repo: "org/x", item_key: key("org/x", 6), repository_id: "20" },
      { id: "run-none", repo: "org/z#unowned", item_key: key("org/z#unowned", 1), repository_id: null },
      { id: "run-old", repo: "org/x#10", item_key: key("org/x#10", 5), repository_id: "10" },
    ]);
    const events = await client.query<{ repo: string; repository_id: string | null }>(`SELECT repo, repository_id::text FROM events WHERE run_id = 'run-old'`);
    expect(events.rows).toEqual([{ repo: "org/x#10", repository_id: "10" }]);
    const items = await client.query(`SELECT key, repository_id::text FROM items`);
    expect(items.rows).toEqual([{ key: key("org/x", 6), repository_id: "20" }]);
    const audit = await client.query(`SELECT repo, repository_id::text FROM audit_log`);
    expect(audit.rows).toEqual([{ repo: "org/x#10", repository_id: "10" }]);
    const retired = await client.query(`SELECT id::text FROM repositories WHERE retired_at IS NOT NULL`);
    expect(retired.rows).toEqual([{ id: "10" }]);
  });

  it("keeps the admins resolved so far, on an unknown host when no App credentials are stored", async () => {
    const { rows } = await client.query(`SELECT host, login, github_id FROM account_resolutions`);
    expect(rows).toEqual([{ host: "", login: "boss", github_id: "42" }]);
  });

  it("moves the rows, written afterwards too, when the repository is renamed", async () => {
    await client.query(`INSERT INTO cycle_budgets (item_key, repo) VALUES ($1, 'org/x')`, [key("org/x", 6)]);
    await client.query(`UPDATE repositories SET full_name = 'org/renamed' WHERE id = 20`);
    const { rows } = await client.query(`SELECT b.item_key, b.repo, i.key FROM cycle_budgets b, items i`);
    expect(rows).toEqual([{ item_key: key("org/renamed", 6), repo: "org/renamed", key: key("org/renamed", 6) }]);
  });
});
