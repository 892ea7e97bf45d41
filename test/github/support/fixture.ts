import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BullWorkQueue, bullConnection, QUEUE_NAMES } from "../../../jobs/queues";
import { atelierApp } from "../../../probot.config";
import type { GitHubAppSettings } from "../../../lib/github/app-settings";
import { defaultInstanceConfig } from "../../../lib/config/roster";
import { createGitHubApp, type GitHubApp } from "../../../lib/github/app-client";
import type { Clock } from "../../../lib/github/clock";
import { reconcileInstallations } from "../../../lib/github/installation-sync";
import { silentLog } from "../../../lib/github/log";
import { nodeWebhookHandler } from "../../../lib/github/node-webhook-handler";
import { receiveWebhook } from "../../../lib/github/receive-webhook";
import { startSimulator, type Simulator } from "../../../lib/sandbox/index";
import type { Db } from "../../../lib/store/kernel/db";
import { createTriggerDeps, type TriggerDeps } from "../../../lib/triggers/deps";
import { isolatedDb } from "./isolated-db";

/** The config most tests use: one issues Loop on the ready-for-agent label. */
export const START_DEV_CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16, description: Atelier may start }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    prompt: |
      Implement #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
`;

export interface Fixture {
  db: Db;
  sim: Simulator;
  github: GitHubApp;
  settings: GitHubAppSettings;
  workQueue: BullWorkQueue;
  deps: TriggerDeps;
  /** the BullMQ prefix of this file */
  prefix: string;
  close(): Promise<void>;
}

/** A simulator, an isolated schema, a GitHubApp pointed at the simulator, and a BullMQ prefix of this file's own. */
export async function startFixture(options: { clock?: Clock; deps?: Partial<TriggerDeps> } = {}): Promise<Fixture> {
  const [db, sim] = await Promise.all([isolatedDb(), startSimulator({})]);
  sim.createUser({ login: "octo" });
  sim.setDefaultUser({ login: "octo" });
  const settings: GitHubAppSettings = sim.appSettings();
  const github = createGitHubApp(settings, { log: silentLog, ...(options.clock ? { clock: options.clock } : {}) });
  const prefix = `t-${randomBytes(4).toString("hex")}`;
  const workQueue = new BullWorkQueue({ connection: bullConnection(), prefix, db, pollIntervalSeconds: 60 });
  const deps = createTriggerDeps({
    db,
    github,
    workQueue,
    roster: defaultInstanceConfig(),
    log: silentLog,
    ...(options.clock ? { clock: options.clock } : {}),
    ...options.deps,
  });
  return {
    db,
    sim,
    github,
    settings,
    workQueue,
    deps,
    prefix,
    async close() {
      for (const name of Object.values(QUEUE_NAMES)) await workQueue.queue(name).obliterate({ force: true }).catch(() => undefined);
      await workQueue.close();
      await sim.close();
      await db.close();
    },
  };
}

/**
 * A repository on the simulator with `.github/atelier.yml`, covered by an installation of the
 * App on its owner, and registered in Atelier (reconcile) unless `register` is false.
 */
export async function installRepository(
  fx: Fixture,
  input: { owner: string; name: string; config?: string | null; files?: Record<string, string>; register?: boolean },
): Promise<{ fullName: string; installationId: number }> {
  if (!fx.sim.state.findAccount(input.owner)) fx.sim.createOrg({ login: input.owner });
  const files = { ...input.files, ...(input.config === null ? {} : { ".github/atelier.yml": input.config ?? START_DEV_CONFIG }) };
  const { fullName } = await fx.sim.createRepo({ owner: input.owner, name: input.name, files });
  const account = fx.sim.state.findAccount(input.owner)!;
  const existing = [...fx.sim.state.installations.values()].find((i) => i.accountId === account.id);
  let installationId: number;
  if (existing) {
    fx.sim.addRepository({ installationId: existing.id, repo: fullName });
    installationId = existing.id;
  } else {
    installationId = fx.sim.createInstallation({ account: input.owner, repos: [input.name] }).id;
  }
  if (input.register !== false) await reconcileInstallations(fx.deps);
  return { fullName: fullName.toLowerCase(), installationId };
}

/** An HTTP endpoint that receives the simulator's webhooks the way the Next route does. */
export async function startWebhookEndpoint(fx: Fixture): Promise<{ url: string; close(): Promise<void> }> {
  await fx.github.probot.load(atelierApp({ db: fx.db, workQueue: fx.workQueue, log: silentLog , onCheckRunAction: async () => ({ tag: "Ignored", reason: "not_an_action" }), onDashboardIssue: async () => null }));
  const server: Server = createServer(
    nodeWebhookHandler((request) => receiveWebhook({ db: fx.db, probot: fx.github.probot, secret: fx.settings.webhookSecret, log: silentLog }, request)),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  fx.sim.setWebhookUrl({ url });
  return {
    url,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface RunRow {
  id: string;
  loop: string;
  number: number | null;
  state: string;
  cancel_reason: string | null;
}

/** The Runs of a repository, oldest first. */
export async function runsOf(db: Db, repo: string): Promise<RunRow[]> {
  const { rows } = await db.pool.query<RunRow>(
    `SELECT id, loop, number, state, cancel_reason FROM runs WHERE repo = $1 ORDER BY created_at, id`,
    [repo.toLowerCase()],
  );
  return rows;
}

/** Waits until `check` returns a value other than undefined (polling every 10 ms; a busy machine may take seconds). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every webhook so far delivered, and every Hint it enqueued handled. */
export async function hintsSettled(fx: Fixture): Promise<void> {
  await fx.sim.waitForWebhooks();
  const queue = fx.workQueue.queue(QUEUE_NAMES.hints);
  await eventually(async () => {
    const counts = await queue.getJobCounts("waiting", "active", "delayed", "prioritized");
    return Object.values(counts).every((n) => n === 0) ? true : undefined;
  }, 30_000);
}
