import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHintWorker } from "../../jobs/processors/hint";
import { bullConnection } from "../../jobs/queues";
import { createLog, type Log } from "../../lib/github/log";
import { readGaugesFrom } from "../../lib/health/gauges";
import { registry } from "../../lib/metrics/metrics";
import { scrapeMetrics } from "../../lib/health/scrape";
import { appRunnerGitHub } from "../../lib/runner/app-github";
import { createTriggerDeps } from "../../lib/triggers/deps";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { nodeWebhookHandler } from "../../lib/github/node-webhook-handler";
import { receiveWebhook } from "../../lib/github/receive-webhook";
import { atelierApp } from "../../probot.config";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { installRepository, runsOf, START_DEV_CONFIG, startFixture, type Fixture } from "../github/support/fixture";
import { AGENT_ENV, agents, attemptsOf, startRunner, waitFor, type RunnerUnderTest } from "../runner/support/runner-fixture";

/**
 * One full flow — a label on the simulator, its webhook through the receiver, the Hint, the
 * Run, the demo agent's Attempt in its sandbox, the pull request — with every process's logger
 * writing into this test: the metrics move as the work happens, the log lines are JSON carrying
 * the ids, and no line holds a secret this test set (the webhook secret, an installation token,
 * the agent's secret, the metrics token), not even one logged on purpose.
 */

const AGENT_SECRET = "agent-secret-value-3f9a1c77e2b4";
const METRICS_TOKEN = "metrics-token-value-8d02be61aa45";
const lines: string[] = [];
const capture = { write: (line: string) => void lines.push(line) };

let fx: Fixture;
let log: Log;
let server: Server;
let hints: Worker;
let runner: RunnerUnderTest;
let root: string;

/** The value of one series of the registry (0 when it has none yet). */
async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const series = values.filter((v) => Object.entries(labels).every(([k, l]) => String((v.labels as Record<string, unknown>)[k]) === l));
  return series.reduce((sum, v) => sum + v.value, 0);
}

/** How many values a histogram observed (default: the Attempts' durations). */
async function durationsObserved(name = "atelier_attempt_duration_seconds"): Promise<number> {
  const { values } = await registry.getSingleMetric(name)!.get();
  return values.filter((v) => (v as { metricName?: string }).metricName?.endsWith("_count")).reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  process.env.AGENT_SECRET_FOR_OPS = AGENT_SECRET;
  process.env.ATELIER_METRICS_TOKEN = METRICS_TOKEN;
  fx = await startFixture();
  process.env.GITHUB_WEBHOOK_SECRET = fx.settings.webhookSecret;
  log = createLog("atelier.test", { destination: capture, secrets: [AGENT_SECRET] });
  fx.deps = createTriggerDeps({ db: fx.db, github: fx.github, workQueue: fx.workQueue, roster: defaultInstanceConfig(), log });
  await fx.github.probot.load(atelierApp({ db: fx.db, workQueue: fx.workQueue, log, onCheckRunAction: async () => ({ tag: "Ignored", reason: "not_an_action" }), onDashboardIssue: async () => null }));
  server = createServer(nodeWebhookHandler((request) => receiveWebhook({ db: fx.db, probot: fx.github.probot, secret: fx.settings.webhookSecret, log }, request)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  fx.sim.setWebhookUrl({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks` });
  hints = createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
  await hints.waitUntilReady();
  root = mkdtempSync(join(tmpdir(), "atelier-ops-flow-"));
  runner = await startRunner({
    db: fx.db,
    prefix: fx.prefix,
    github: appRunnerGitHub(fx.github, fx.db),
    workspaceRoot: root,
    workerId: "ops-flow",
    leaseTtlMs: 10_000,
    roster: agents({ demo: { secrets: ["AGENT_SECRET_FOR_OPS"] } }),
    agentEnv: { ...AGENT_ENV, AGENT_SECRET_FOR_OPS: AGENT_SECRET },
    log,
  });
  readGaugesFrom(fx.db);
}, 120_000);

afterAll(async () => {
  readGaugesFrom(null);
  await runner?.close();
  await hints?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await fx?.close();
  if (root) rmSync(root, { recursive: true, force: true });
  delete process.env.ATELIER_METRICS_TOKEN;
});

describe("a full flow, observed", () => {
  it("moves the metrics, logs JSON lines with the ids, and logs no secret", async () => {
    const before = {
      accepted: await value("atelier_webhook_deliveries_total", { outcome: "accepted" }),
      opened: await value("atelier_run_transitions_total", { to: "Pending" }),
      running: await value("atelier_run_transitions_total", { to: "Running" }),
      succeeded: await value("atelier_run_transitions_total", { to: "Succeeded" }),
      attempts: await value("atelier_attempt_outcomes_total", { outcome: "Succeeded", category: "none" }),
      durations: await durationsObserved(),
      sandbox: await value("atelier_sandbox_starts_total"),
      polls: await value("atelier_polls_total", { outcome: "polled" }),
      toStart: await durationsObserved("atelier_run_trigger_to_start_seconds"),
      toMerge: await durationsObserved("atelier_run_trigger_to_merge_seconds"),
      merged: await value("atelier_run_outcomes_total", { outcome: "merged" }),
    };

    const { fullName, installationId } = await installRepository(fx, { owner: "ops-org", name: "observed", config: START_DEV_CONFIG.replace("    agent: demo\n", "    agent: demo\n    approval: none\n") });
    fx.sim.setUserPermission({ repo: fullName, login: "octo", permission: "write" }); // a writer starts the agent
    await pollRepository(fx.deps, fullName); // creates the label
    const issue = fx.sim.createIssue({ repo: fullName, title: "Observe me", body: "A full flow." });
    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: ["ready-for-agent"] });
    await fx.sim.waitForWebhooks();
    const run = await waitFor("the Run to succeed", async () => (await runsOf(fx.db, fullName)).find((r) => ["Succeeded", "Failed", "Canceled"].includes(r.state)), 90_000, 200);
    const attempts = await attemptsOf(fx.db, run.id);
    expect(run.state, JSON.stringify(attempts)).toBe("Succeeded");

    // the counters moved while the work happened
    expect(await value("atelier_webhook_deliveries_total", { outcome: "accepted" })).toBeGreaterThan(before.accepted);
    expect(await value("atelier_run_transitions_total", { to: "Pending" })).toBe(before.opened + 1);
    expect(await value("atelier_run_transitions_total", { to: "Running" })).toBe(before.running + 1);
    expect(await value("atelier_run_transitions_total", { to: "Succeeded" })).toBe(before.succeeded + 1);
    expect(await value("atelier_attempt_outcomes_total", { outcome: "Succeeded", category: "none" })).toBe(before.attempts + 1);
    expect(await durationsObserved()).toBe(before.durations + 1);
    expect(await value("atelier_sandbox_starts_total")).toBe(before.sandbox + 1);
    expect(await value("atelier_polls_total", { outcome: "polled" })).toBeGreaterThan(before.polls);
    expect(await value("atelier_github_rate_limit_remaining", { caller: `installation:${installationId}` })).toBeGreaterThan(0);
    expect(await durationsObserved("atelier_run_trigger_to_start_seconds")).toBe(before.toStart + 1);

    // its pull request merged on GitHub: the next poll's read counts the outcome and the time to it
    const pullRequest = (await fx.db.pool.query<{ n: number | null }>(`SELECT pull_request_number AS n FROM runs WHERE id = $1`, [run.id])).rows[0]!.n;
    expect(pullRequest).not.toBeNull();
    await fx.sim.mergePullRequest({ repo: fullName, number: pullRequest! });
    await pollRepository(fx.deps, fullName);
    expect(await value("atelier_run_outcomes_total", { outcome: "merged" })).toBe(before.merged + 1);
    expect(await durationsObserved("atelier_run_trigger_to_merge_seconds")).toBe(before.toMerge + 1);
    expect((await fx.db.pool.query(`SELECT pull_request_state FROM runs WHERE id = $1`, [run.id])).rows[0].pull_request_state).toBe("merged");

    // the scrape shows every family, the scrape-time gauges included, behind the token
    await expect(scrapeMetrics(null)).rejects.toMatchObject({ token: "metrics_unauthorized", status: 401 });
    await expect(scrapeMetrics(`Bearer ${METRICS_TOKEN}x`)).rejects.toMatchObject({ token: "metrics_unauthorized" });
    const text = (await scrapeMetrics(`Bearer ${METRICS_TOKEN}`)).body;
    for (const family of [
      "atelier_runs",
      "atelier_run_transitions_total",
      "atelier_attempt_outcomes_total",
      "atelier_attempt_duration_seconds",
      "atelier_queue_depth",
      "atelier_queue_oldest_seconds",
      "atelier_poll_lag_seconds",
      "atelier_webhook_deliveries_total",
      "atelier_github_rate_limit_remaining",
      "atelier_lease_losses_total",
      "atelier_sandbox_starts_total",
      "atelier_sandbox_egress_refusals_total",
      "atelier_outbound_deliveries_total",
      "atelier_run_outcomes_total",
      "atelier_run_trigger_to_start_seconds",
      "atelier_run_trigger_to_merge_seconds",
    ]) {
      expect(text, family).toMatch(new RegExp(`^# TYPE ${family} `, "m"));
    }
    expect(text).toMatch(/^atelier_runs\{state="Succeeded"\} [1-9]/m);
    expect(text).toMatch(new RegExp(`^atelier_poll_lag_seconds\\{installation_id="${installationId}"\\} `, "m"));
    // bounded cardinality: no repository, Item or person in any label
    expect(text).not.toContain(fullName);
    expect(text).not.toContain("ops-org");

    // an attacker's favourite: a secret in an error message, logged as it is
    const token = (await fx.github.installationOctokit(installationId).auth({ type: "installation" })) as { token: string };
    log.warn({ err: `git push https://x-access-token:${token.token}@github.example/ops-org/observed failed`, hint: AGENT_SECRET }, "push failed");
    log.error({ detail: `signature with ${fx.settings.webhookSecret}`, metrics: METRICS_TOKEN }, "webhook secret in a message");

    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(3);
    for (const e of entries) expect(typeof e.msg).toBe("string");
    expect(entries.find((e) => e.msg === "webhook handled" && typeof e.delivery_id === "string")).toMatchObject({ installation_id: installationId });
    expect(entries.find((e) => e.msg === "attempt started")).toMatchObject({ run_id: run.id, attempt_id: `${run.id}/agent/1` });
    expect(entries.find((e) => e.msg === "attempt ended")).toMatchObject({ run_id: run.id, attempt_id: `${run.id}/agent/1` });

    const all = lines.join("");
    for (const secret of [fx.settings.webhookSecret, token.token, AGENT_SECRET, METRICS_TOKEN]) {
      expect(all.includes(secret), `a log line holds ${secret.slice(0, 6)}…`).toBe(false);
      expect(all.includes(Buffer.from(secret).toString("base64")), "a log line holds a secret in base64").toBe(false);
    }
    expect(all).toContain("push failed");
  }, 150_000);
});
