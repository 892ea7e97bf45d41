import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBudgets } from "../../lib/dashboard/budgets";
import { decodeCursor, encodeCursor, loadRunPage, searchTerms } from "../../lib/dashboard/runs-list";
import { BadInputError } from "../../lib/errors";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { seedItem, seedRepo, seedRun, uniqueInstallationId } from "./support/seed";

const tag = randomBytes(3).toString("hex");
const REPO = `runs-${tag}/app`;
const OTHER = `runs-${tag}/other`;
let db: Db;
const ids: string[] = [];

beforeAll(async () => {
  db = testDb(4);
  const installation = uniqueInstallationId();
  await seedRepo(db, REPO, installation, { config: { labels: [], loops: [{ name: "start-dev", trigger: { kind: "issues" }, maxCycles: 3 }], errors: [] } });
  await seedRepo(db, OTHER, installation);
  for (let n = 1; n <= 7; n++) {
    await seedItem(db, REPO, n, { title: n === 4 ? "Fix the 100% width_bug" : `Issue ${n}` });
    // two Runs in the same microsecond: the id breaks the tie
    const at = new Date(Date.parse("2026-11-30T10:00:00Z") + Math.floor(n / 2) * 1000);
    ids.push(await seedRun(db, { repo: REPO, number: n, state: n % 3 === 0 ? "Failed" : "Succeeded", loop: n === 7 ? "review" : "start-dev", agent: n === 5 ? "codex" : "demo", receivedAt: at }));
  }
  await seedRun(db, { repo: OTHER, number: 1, state: "Running" });
});
afterAll(() => db.close());

describe("the Runs list", () => {
  it("pages newest first by a keyset cursor, each Run once, ties broken by id", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await loadRunPage(db, [REPO], {}, { cursor, limit: 3 });
      seen.push(...page.runs.map((r) => r.id));
      cursor = page.next;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(ids));
    const all = await loadRunPage(db, [REPO], {}, { limit: 50 });
    expect(all.runs.map((r) => r.id)).toEqual(seen);
    expect(all.next).toBeNull();
    const times = all.runs.map((r) => r.receivedAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  it("filters by Loop, agent and state, and sees only the repositories given", async () => {
    expect((await loadRunPage(db, [REPO], { loop: "review" })).runs.map((r) => r.number)).toEqual([7]);
    expect((await loadRunPage(db, [REPO], { agent: "codex" })).runs.map((r) => r.number)).toEqual([5]);
    expect((await loadRunPage(db, [REPO], { state: "Failed" })).runs.map((r) => r.number).sort()).toEqual([3, 6]);
    expect((await loadRunPage(db, [REPO], { state: "Running" })).runs).toEqual([]);
    expect((await loadRunPage(db, [OTHER], {})).runs.map((r) => r.repo)).toEqual([OTHER]);
    expect(await loadRunPage(db, [], {})).toEqual({ runs: [], next: null });
  });

  it("searches an Item number, a Run id's start, or words of a title (taken literally)", async () => {
    expect((await loadRunPage(db, [REPO], { q: "#4" })).runs.map((r) => r.number)).toEqual([4]);
    expect((await loadRunPage(db, [REPO], { q: ids[1]!.slice(0, 10) })).runs.map((r) => r.id)).toEqual([ids[1]]);
    expect((await loadRunPage(db, [REPO], { q: "100% WIDTH_bug" })).runs.map((r) => r.number)).toEqual([4]);
    expect((await loadRunPage(db, [REPO], { q: "1_0" })).runs).toEqual([]);
    expect((await loadRunPage(db, [REPO], { q: "%" })).runs.map((r) => r.number)).toEqual([4]);
    expect(searchTerms("  ")).toEqual({ number: null, idPrefix: null, title: null });
  });

  it("refuses a cursor it did not give with invalid_cursor", async () => {
    expect(decodeCursor(encodeCursor("2026-11-30T10:00:00.123456Z", "abc"))).toEqual({ at: "2026-11-30T10:00:00.123456Z", id: "abc" });
    for (const bad of ["nope", Buffer.from('["yesterday","x"]').toString("base64url"), Buffer.from("[1,2]").toString("base64url"), ""]) {
      await expect(loadRunPage(db, [REPO], {}, { cursor: bad || "=" })).rejects.toMatchObject({ token: "invalid_cursor" });
    }
    expect(() => decodeCursor("%%%")).toThrow(BadInputError);
  });
});

describe("the Budgets page", () => {
  it("lists every Item a Loop with max_cycles opened a Run on, with its use, before any budget was used up", async () => {
    const budgets = await loadBudgets(db, [REPO]);
    const first = budgets.find((b) => b.number === 1 && b.loop === "start-dev");
    expect(first).toMatchObject({ repo: REPO, generation: 0, used: 1, maxCycles: 3, ask: null });
    expect(budgets.filter((b) => b.loop === "start-dev")).toHaveLength(6);
    // a Loop the config does not list keeps its row, its maximum unknown
    expect(budgets.find((b) => b.loop === "review")).toMatchObject({ number: 7, used: 1, maxCycles: null });
  });
});
