import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Db } from "../../lib/store/kernel/db";
import { staleSandboxSentence } from "../../lib/supervisor/stale-sandbox";
import { testDb, uniqueRepo } from "../support/db";

let db: Db;
let dir: string;

beforeAll(async () => {
  db = testDb(2);
  dir = await mkdtemp(join(tmpdir(), "stale-sandbox-"));
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

it("a fresh simulated GitHub over a database that holds Items is one sentence; a kept world is none", async () => {
  const repo = uniqueRepo("stale");
  await db.pool.query(`INSERT INTO items (key, repo, number, kind, state, title, projection, content_hash) VALUES ($1, $2, 1, 'issue', 'open', 'x', '{}', 'x')`, [
    JSON.stringify(["github", repo, 1]),
    repo,
  ]);
  const stateFile = join(dir, "state.json");
  const sentence = await staleSandboxSentence(db, stateFile);
  expect(sentence).toMatch(new RegExp(`^atelier: the sandbox's GitHub starts afresh \\(no ${stateFile} yet\\) but the database already holds \\d+ Items? from before it; .*DATABASE_URL at a new one\\.$`));
  await writeFile(stateFile, "{}");
  expect(await staleSandboxSentence(db, stateFile)).toBeNull();
});
