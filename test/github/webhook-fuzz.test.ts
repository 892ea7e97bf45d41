import { createHmac, randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import definitions from "@octokit/webhooks-examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis } from "../../lib/config/redis";
import { WANTED_EVENTS } from "../../lib/github/receive-webhook";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

// Every payload parsed before it is used (THREATS.md, attack 19): 1,200 *signed* deliveries made
// from GitHub's own example payloads by seeded mutation, through the Next route handler with
// Atelier's handlers loaded, on a database and a Redis prefix of this file. No answer is a 5xx,
// every 4xx carries a token, and no Run comes of it.

const SEED = 0x16_2026;
const DELIVERIES = 1_200;
const tag = randomBytes(3).toString("hex");
let sim: Simulator;
let priv: PrivateDb;
let POST: (request: Request) => Promise<Response>;

beforeAll(async () => {
  sim = await startSimulator({});
  priv = await createPrivateDb("fuzz");
  const dir = await mkdtemp(join(tmpdir(), "atelier-fuzz-"));
  const file = join(dir, "sandbox-app.json");
  await writeFile(file, JSON.stringify({ baseUrl: sim.url, ...sim.app }));
  delete process.env.GITHUB_APP_ID;
  process.env.ATELIER_SANDBOX_APP_FILE = file;
  process.env.DATABASE_URL = priv.url;
  process.env.ATELIER_REDIS_PREFIX = `test-fuzz-${tag}`;
  process.env.LOG_LEVEL = "silent";
  ({ POST } = await import("../../app/api/github/webhooks/route"));
}, 60_000);

afterAll(async () => {
  const { getDb } = await import("../../lib/store/kernel/db");
  await getDb().close();
  await priv?.drop();
  await sim?.close();
  const redis = createRedis();
  const keys = await redis.keys(`test-fuzz-${tag}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

/** mulberry32: the same seed, the same deliveries, on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const DEEP = "\u0001deep\u0001";
const STRANGE_TEXT = ["\u0000", "a\u0000b", "\ud800", "\udfff\ud800", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🚀", "\u202eevil", "x".repeat(70_000), "", " ", "../../etc/passwd", "owner/name/extra", "<script>", "%00"];
const STRANGE_VALUES: Json[] = [null, 0, -1, 1e300, -0.5, 2 ** 63, true, "12", [], {}, [null], { id: "x" }];

/** The paths of every value in a payload, to pick one to mutate. */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 6 || value === null || typeof value !== "object") return out;
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    out.push([...prefix, k]);
    paths(v, [...prefix, k], out, depth + 1);
  }
  return out;
}

function parentOf(root: Json, path: (string | number)[]): { parent: Record<string | number, Json>; key: string | number } {
  let node = root as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, Json>;
  return { parent: node, key: path[path.length - 1]! };
}

const KNOWN_FIELDS = ["installation", "repository", "sender", "action", "issue", "pull_request", "number", "check_run", "ref", "commits", "repositories", "repositories_added", "repositories_removed", "requested_action"];

function mutate(r: ReturnType<typeof prng>, payload: Json, headers: { event: string }): string {
  const rounds = 1 + r.int(3);
  for (let i = 0; i < rounds; i++) {
    const all = paths(payload);
    // half the time aim at a field Atelier reads, else anywhere
    const aimed = all.filter((p) => KNOWN_FIELDS.includes(String(p[0])) && p.length <= 3);
    const path = r.next() < 0.5 && aimed.length ? r.pick(aimed) : all.length ? r.pick(all) : null;
    const kind = r.int(9);
    if (kind === 0 && path) {
      const { parent, key } = parentOf(payload, path);
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else if (kind === 1 && path) {
      const { parent, key } = parentOf(payload, path);
      parent[key] = r.pick(STRANGE_VALUES);
    } else if (kind === 2 && path) {
      const { parent, key } = parentOf(payload, path);
      parent[key] = null;
    } else if (kind === 3 && path) {
      const { parent, key } = parentOf(payload, path);
      parent[key] = r.pick(STRANGE_TEXT);
    } else if (kind === 4 && path) {
      const { parent, key } = parentOf(payload, path);
      parent[key] = DEEP;
    } else if (kind === 5) {
      (payload as Record<string, Json>).action = r.pick(["zzz_unknown", "", "CREATED", "created\u0000", "requested_action", "rerequested", "deleted", "edited"]);
    } else if (kind === 6) {
      headers.event = r.pick(["unknown_event", "issues", "pull_request", "check_run", "installation", "push", "label", "ISSUES", "iss\u00fces"]);
    } else if (kind === 7 && path) {
      const { parent, key } = parentOf(payload, path);
      const inner = parent[key];
      parent[key] = typeof inner === "object" && inner !== null ? JSON.stringify(inner) : Array.isArray(inner) ? {} : [inner ?? null];
    } else {
      (payload as Record<string, Json>)[r.pick(KNOWN_FIELDS)] = r.pick([...STRANGE_VALUES, ...STRANGE_TEXT]);
    }
  }
  const depth = 5_000 + r.int(20_000);
  return JSON.stringify(payload).replaceAll(JSON.stringify(DEEP), "[".repeat(depth) + "]".repeat(depth));
}

function deliveries(): { event: string; id: string; body: string }[] {
  const r = prng(SEED);
  const wanted = definitions.filter((d) => WANTED_EVENTS.has(d.name));
  const out: { event: string; id: string; body: string }[] = [];
  for (let n = 0; n < DELIVERIES; n++) {
    const def = r.next() < 0.75 ? r.pick(wanted) : r.pick(definitions);
    const example = structuredClone(r.pick(def.examples)) as unknown as Json;
    const headers = { event: def.name };
    // one in ten goes as GitHub sent it: those must be taken
    const body = n % 10 === 0 ? JSON.stringify(example) : mutate(r, example, headers);
    out.push({ event: headers.event, id: `fuzz-${tag}-${n}`, body });
  }
  return out;
}

const sign = (body: string) => `sha256=${createHmac("sha256", sim.app.webhookSecret).update(body, "utf8").digest("hex")}`;

describe("webhook fuzz", () => {
  it(`${DELIVERIES} signed, mutated deliveries: none answered ≥ 500, every 4xx with a token, no Run made`, async () => {
    const runsBefore = await priv.db.pool.query(`SELECT count(*)::int AS n FROM runs`);
    const failures: string[] = [];
    const tally: Record<string, number> = {};
    for (const d of deliveries()) {
      const res = await POST(
        new Request("http://localhost/api/github/webhooks", {
          method: "POST",
          body: d.body,
          headers: { "content-type": "application/json", "x-github-event": d.event, "x-github-delivery": d.id, "x-hub-signature-256": sign(d.body) },
        }),
      );
      const answer = (await res.json()) as { error?: unknown; status?: unknown; reason?: unknown };
      const key = `${res.status} ${String(answer.error ?? answer.status)}${answer.reason ? ` (${String(answer.reason)})` : ""}`;
      tally[key] = (tally[key] ?? 0) + 1;
      if (res.status >= 500) failures.push(`${d.id} ${d.event}: ${res.status} ${JSON.stringify(answer).slice(0, 200)} ← ${d.body.slice(0, 300)}`);
      else if (res.status >= 400 && (typeof answer.error !== "string" || !/^[a-z_]+$/.test(answer.error))) failures.push(`${d.id}: ${res.status} without a token`);
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // the fuzz reached the handlers and the filter both, not only one refusal
    expect(tally["200 accepted"]).toBeGreaterThan(50);
    expect(tally["200 filtered (unexpected payload)"]).toBeGreaterThan(100);
    const runsAfter = await priv.db.pool.query(`SELECT count(*)::int AS n FROM runs`);
    expect(runsAfter.rows[0].n).toBe(runsBefore.rows[0].n);
  }, 240_000);
});
