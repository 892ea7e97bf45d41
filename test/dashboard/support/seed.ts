import { createHash, randomBytes } from "node:crypto";
import { itemKey } from "../../../lib/engine/ids";
import type { RunStateName } from "../../../lib/engine/run-state";
import { openSession, storeUserToken } from "../../../lib/auth/sessions";
import type { Db } from "../../../lib/store/kernel/db";
import { upsertUser } from "../../../lib/store/people/users";

/** Rows for dashboard tests, written straight to Postgres (each test file uses its own repos). */

const hex = (n: number) => randomBytes(n).toString("hex");

export function uniqueInstallationId(): number {
  return 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
}

/** The GitHub id FakeGitHub lists a repository under when a test gives none: derived from its name, as seedRepo's default. */
export function repositoryIdFor(fullName: string): number {
  return Number.parseInt(createHash("sha256").update(fullName.toLowerCase()).digest("hex").slice(0, 12), 16);
}

/** Registers a repository under GitHub id `opts.id` (the simulator's, when it lists it), else repositoryIdFor(repo). */
export async function seedRepo(
  db: Db,
  repo: string,
  installationId: number,
  opts: { id?: number; config?: unknown; configError?: string | null; pollError?: string | null; account?: string } = {},
): Promise<void> {
  await db.pool.query(
    `INSERT INTO installations (id, account_login, updated_at) VALUES ($1, $2, now()) ON CONFLICT (id) DO NOTHING`,
    [installationId, opts.account ?? repo.split("/")[0]],
  );
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, config, config_error, poll_error, poll_error_at, last_polled_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6::text IS NULL THEN NULL ELSE now() END, now(), now())`,
    [
      opts.id ?? repositoryIdFor(repo),
      installationId,
      repo,
      JSON.stringify(opts.config ?? { labels: [], loops: [{ name: "start-dev", trigger: { kind: "issues" } }], errors: [] }),
      opts.configError ?? null,
      opts.pollError ?? null,
    ],
  );
}

export async function seedItem(
  db: Db,
  repo: string,
  number: number,
  opts: { title?: string; labels?: string[]; state?: string; kind?: string; updatedAt?: Date } = {},
): Promise<string> {
  const key = itemKey(repo, number);
  await db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, labels, projection, content_hash, github_updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, '{}', $8, $9)`,
    [key, repo, number, opts.kind ?? "issue", opts.state ?? "open", opts.title ?? `Issue ${number}`, opts.labels ?? [], hex(8), opts.updatedAt ?? new Date()],
  );
  return key;
}

export interface SeedAttempt {
  state: "Running" | "Succeeded" | "Failed" | "Canceled";
  failureKind?: string;
  failureCategory?: string;
  failureMessage?: string;
}

export async function seedRun(
  db: Db,
  opts: {
    repo: string;
    number: number;
    state: RunStateName;
    loop?: string;
    attempts?: SeedAttempt[];
    pullRequestNumber?: number | null;
    waitingReason?: string | null;
    agent?: string;
    receivedAt?: Date;
  },
): Promise<string> {
  const id = hex(16);
  const loop = opts.loop ?? "start-dev";
  const key = itemKey(opts.repo, opts.number);
  const eventId = JSON.stringify([loop, opts.repo, opts.number, hex(6)]);
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission) VALUES ($1, 'item', $2, $3, $4, $5, 'Claimed', $6, '{}')`,
    [eventId, loop, opts.repo, key, opts.number, id],
  );
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, waiting_reason, pull_request_number, reserved_generation, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::text::"RunState", $8, $9, true, $10, $11, $12, 0, CASE WHEN $7::text IN ('Running','Succeeded','Failed') THEN now() END)`,
    [
      id,
      eventId,
      loop,
      opts.repo,
      key,
      opts.number,
      opts.state,
      opts.agent ?? "demo",
      `Implement #${opts.number}`,
      opts.receivedAt ?? new Date(),
      opts.waitingReason ?? (opts.state === "Waiting" ? "approval" : null),
      opts.pullRequestNumber ?? null,
    ],
  );
  let n = 0;
  for (const a of opts.attempts ?? []) {
    n++;
    await db.pool.query(
      `INSERT INTO attempts (id, run_id, number, state, failure_kind, failure_category, failure_message, retryable, ended_at)
       VALUES ($1, $2, $3, $4::text::"AttemptState", $5, $6, $7, $8, CASE WHEN $4::text = 'Running' THEN NULL ELSE now() END)`,
      [`${id}/agent/${n}`, id, n, a.state, a.failureKind ?? null, a.failureCategory ?? null, a.failureMessage ?? null, a.failureKind ? false : null],
    );
    // as the statement that closes an Attempt as Failed does
    if (a.state === "Failed") await db.pool.query(`UPDATE runs SET failed_attempt_id = $2 WHERE id = $1`, [id, `${id}/agent/${n}`]);
  }
  return id;
}

/** A signed-in user: the row, their sealed GitHub token, and a session token for the cookie. */
export async function seedUser(db: Db, user: { id: number; login: string; token: string }, secret: string): Promise<string> {
  await upsertUser(db, { githubId: String(user.id), login: user.login, name: user.login, avatarUrl: null });
  await storeUserToken(db, String(user.id), user.token, secret);
  return (await openSession(db, String(user.id))).sessionToken;
}

export const cookieFor = (sessionToken: string) => `authjs.session-token=${sessionToken}`;
