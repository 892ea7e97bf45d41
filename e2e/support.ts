import { expect, test as base, type Page } from "@playwright/test";
import pg from "pg";
import { itemKey } from "../lib/engine/ids";

/** The specs' view of the stack e2e/global-setup.ts started. */
export const stack = {
  baseUrl: process.env.E2E_BASE_URL ?? "",
  simUrl: process.env.E2E_SIM_URL ?? "",
  databaseUrl: process.env.E2E_DATABASE_URL ?? "",
  worker: process.env.E2E_WORKER === "1",
  /** The local npm registry (verdaccio) the instance's `registries:` allows. */
  npmRegistryUrl: process.env.E2E_NPM_REGISTRY_URL ?? "",
};

export const test = base.extend<{ db: pg.Pool }>({
  baseURL: stack.baseUrl,
  db: async ({}, use) => {
    const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    await use(pool);
    await pool.end();
  },
});

export { expect };

/** Calls the simulator's control API (what a person would do on GitHub). */
export async function sim<T = unknown>(method: string, input: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${stack.simUrl}/_sim/control/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  if (!res.ok) throw new Error(`sim ${method}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function simState(): Promise<{ installations: { id: number; account: string; repositories: string[] }[] }> {
  return (await fetch(`${stack.simUrl}/_sim/state`)).json();
}

/** Signs in through the simulator's OAuth page as `login` (one of the demo users). */
export async function signIn(page: Page, login: string): Promise<void> {
  await sim("setDefaultUser", { login });
  await page.goto("/signin");
  await page.getByTestId("signin-github").click();
  await page.waitForURL(/\/board/);
  await expect(page.getByTestId("viewer-login")).toHaveText(login);
}

/** The demo installation's repository registered in Atelier (what the worker does on its own). */
export async function registerDemoRepo(db: pg.Pool, repo = "demo-org/webapp"): Promise<void> {
  const installation = (await simState()).installations.find((i) => i.repositories.includes(repo));
  if (!installation) throw new Error(`the simulator has no installation with ${repo}`);
  await db.query(`INSERT INTO installations (id, account_login, updated_at) VALUES ($1, $2, now()) ON CONFLICT (id) DO NOTHING`, [installation.id, installation.account]);
  await db.query(
    `INSERT INTO repositories (id, installation_id, full_name, config, last_polled_at, updated_at)
     VALUES ($1, $2, $3, $4, now(), now()) ON CONFLICT (full_name) DO NOTHING`,
    [900_000 + Math.floor(Math.random() * 1e6), installation.id, repo, JSON.stringify({ labels: [], loops: [{ name: "start-dev", trigger: { kind: "issues" } }], errors: [] })],
  );
}

export async function seedItem(db: pg.Pool, repo: string, number: number, opts: { title: string; labels?: string[]; state?: string }): Promise<string> {
  const key = itemKey(repo, number);
  await db.query(
    `INSERT INTO items (key, repo, number, kind, state, title, labels, projection, content_hash, github_updated_at)
     VALUES ($1, $2, $3, 'issue', $4, $5, $6, '{}', md5($1), now()) ON CONFLICT (key) DO NOTHING`,
    [key, repo, number, opts.state ?? "open", opts.title, opts.labels ?? []],
  );
  return key;
}

export async function seedRun(
  db: pg.Pool,
  repo: string,
  number: number,
  state: string,
  opts: { attempt?: { state: string; failureKind?: string; failureCategory?: string; message?: string }; pullRequestNumber?: number } = {},
): Promise<string> {
  const id = `e2e${number}${Math.random().toString(16).slice(2, 10)}`;
  const eventId = JSON.stringify(["start-dev", repo, number, id]);
  await db.query(`INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission) VALUES ($1, 'item', 'start-dev', $2, $3, $4, 'Claimed', $5, '{}')`, [
    eventId,
    repo,
    itemKey(repo, number),
    number,
    id,
  ]);
  await db.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, waiting_reason, pull_request_number, reserved_generation)
     VALUES ($1, $2, 'start-dev', $3, $4, $5, $6::text::"RunState", 'demo', $7, true, now(), $8, $9, 0)`,
    [id, eventId, repo, itemKey(repo, number), number, state, `Implement #${number}`, state === "Waiting" ? "approval" : null, opts.pullRequestNumber ?? null],
  );
  if (opts.attempt) {
    await db.query(
      `INSERT INTO attempts (id, run_id, number, state, failure_kind, failure_category, failure_message, retryable, ended_at, agent)
       VALUES ($1, $2, 1, $3::text::"AttemptState", $4, $5, $6, false, now(), 'demo')`,
      [`${id}/agent/1`, id, opts.attempt.state, opts.attempt.failureKind ?? null, opts.attempt.failureCategory ?? null, opts.attempt.message ?? null],
    );
    // the Run keeps its latest failed Attempt, as the statement that closes an Attempt writes it (ADR 0024)
    if (opts.attempt.state === "Failed") await db.query(`UPDATE runs SET failed_attempt_id = $1 WHERE id = $2`, [`${id}/agent/1`, id]);
  }
  return id;
}

export async function transcript(db: pg.Pool, runId: string, text: string, stream = "stdout"): Promise<void> {
  await db.query(`INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, $3, $4)`, [`${runId}/agent/1`, runId, stream, text]);
  await db.query(`SELECT pg_notify('atelier_transcript', $1)`, [runId]);
}
