// The BullMQ side of lib/work/work-queue.ts: queue names, job ids and the WorkQueue the
// product uses. Every job here can be rebuilt from Postgres (syncSchedulers, reconcile), so
// Redis only holds what can be lost.
import { Queue, type ConnectionOptions, type IRedisClient, type JobsOptions } from "bullmq";
import { instanceRedisPrefix, reconnectDelayMs, redisOptions } from "../lib/config/redis";
import type { Db } from "../lib/store/kernel/db";
import { scheduleLoops } from "../lib/triggers/fire-schedule";
import type { Hint, WorkQueue } from "../lib/work/work-queue";
import { attemptPriority } from "./processors/attempt-priority";

export const QUEUE_NAMES = {
  hints: "hints",
  poll: "poll",
  schedules: "schedules",
  attempts: "attempts",
  installations: "installations",
  deliveries: "deliveries",
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** The BullMQ key prefix of a queue or worker: the one given (tests use one per file), else the instance's. */
export const bullPrefix = (prefix?: string): { prefix: string } => ({ prefix: prefix ?? instanceRedisPrefix() });

/**
 * BullMQ connection options from REDIS_URL (options, not a client: BullMQ opens and closes its
 * own). A worker waits for Redis as long as it takes (maxRetriesPerRequest: null, as BullMQ's
 * workers need); a producer that answers a person (`failFast`: the web process) gives up after
 * one reconnection, so that a request meets a 503 `queue_unavailable`, not a hang. Both try
 * to reconnect at most 2 s apart (`reconnectDelayMs`), not BullMQ's 20 s.
 */
export function bullConnection(url?: string, options: { failFast?: boolean } = {}): ConnectionOptions {
  const o = redisOptions(url);
  return { host: o.host, port: o.port, username: o.username, password: o.password, db: o.db, retryStrategy: reconnectDelayMs, maxRetriesPerRequest: options.failFast ? 1 : null };
}

/** Job data of each queue. */
/** One repository's cycle now (a webhook asked), or, without `repo`, a tick of adaptive polling. */
export interface PollJob {
  repo?: string;
}
export interface ScheduleJob {
  repo: string;
  loop: string;
}
export interface MoveRunJob {
  runId: string;
  /** ISO time the Run's Event was received: attempts are served in that order */
  receivedAt: string;
  /** how many times this job was found abandoned that a move has already counted (attempt.ts) */
  abandonsCounted?: number;
}
export interface DeliverJob {
  deliveryId: number;
}
export type InstallationJob = { kind: "reconcile" };

/**
 * Job ids. BullMQ refuses a custom id with one ":" (it reserves the form for its own repeat
 * jobs), so ids use "-": a pending job with the same id absorbs a duplicate.
 */
export const hintJobId = (hint: Pick<Hint, "repo" | "number" | "comment">): string =>
  `hint-${hint.repo.toLowerCase()}#${hint.number}${hint.comment ? `-${hint.comment.kind}-${hint.comment.id}` : ""}`;
export const runJobId = (runId: string): string => `run-${runId}`;
/** The Redis set of the senders of the Hints a pending Hint job absorbed (its job-id dedup keeps one job's data). */
export const hintSendersKey = (prefix: string | undefined, jobId: string): string => `${bullPrefix(prefix).prefix}:hint-senders:${jobId}`;
/** How long a sender waits in that set for its Hint's job (a day: the job runs in seconds). */
const HINT_SENDERS_TTL_S = 86_400;
export const pollNowJobId = (repo: string): string => `poll-now-${repo.toLowerCase()}`;
/** The one poll scheduler: it ticks, and the repositories due in Postgres are probed (ADR 0020). */
export const POLL_TICK_SCHEDULER_ID = "poll-tick";
/** How often the poll scheduler looks for due repositories: a quarter of the shortest interval, at most 15 s. */
export const pollTickMs = (pollIntervalSeconds: number): number => Math.min(15_000, pollIntervalSeconds * 250);
export const scheduleSchedulerId = (repo: string, loop: string): string => `schedule-${repo.toLowerCase()}-${loop}`;
export const RECONCILE_SCHEDULER_ID = "reconcile-installations";
/** How often installations are reconciled with GitHub besides the start (webhooks are hints). */
export const RECONCILE_EVERY_MS = 60 * 60_000;

/** Jobs that leave Redis once done, so the same id can be added again later. */
const TRANSIENT: JobsOptions = { removeOnComplete: true, removeOnFail: true };
/** A job in one of these states has not started: a Hint merged into it is read when it runs. */
const WAITING_STATES = new Set(["waiting", "prioritized", "delayed", "waiting-children"]);

export interface BullWorkQueueOptions {
  connection: ConnectionOptions;
  /** BullMQ key prefix (tests use one per file); default the instance's (ATELIER_REDIS_PREFIX). */
  prefix?: string;
  db: Db;
  /** Interval of each repository's poll scheduler (the instance's poll_interval_seconds). */
  pollIntervalSeconds: number;
}

export class BullWorkQueue implements WorkQueue {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(private readonly options: BullWorkQueueOptions) {}

  /** The queue of that name (created on first use, closed by close()). */
  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.options.connection, ...bullPrefix(this.options.prefix) });
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Adds a Hint; one still waiting for the Item absorbs it. Its sender is kept first in a set the
   * job reads when it runs (takeHintSenders): every sender of a merged Hint counts. A job that
   * has already started may have read the Item before this Hint's change: the Hint then waits
   * as a job of its own (one id, so later Hints merge into it), and reads the Item again.
   */
  async hint(hint: Hint): Promise<void> {
    const queue = this.queue(QUEUE_NAMES.hints);
    const add = async (jobId: string) => {
      if (hint.sender) {
        const key = hintSendersKey(this.options.prefix, jobId);
        await (await queue.getBackend().client).multi().runCommand("sadd", [key, hint.sender]).runCommand("expire", [key, HINT_SENDERS_TTL_S]).exec();
      }
      return queue.add("hint", hint, { ...TRANSIENT, jobId });
    };
    const job = await add(hintJobId(hint));
    if (!WAITING_STATES.has(await job.getState())) await add(`${hintJobId(hint)}~again`);
  }

  async moveRun(runId: string, opts: Parameters<WorkQueue["moveRun"]>[1] = {}): Promise<void> {
    const data: MoveRunJob = { runId, receivedAt: (opts.receivedAt ?? new Date()).toISOString() };
    await this.queue(QUEUE_NAMES.attempts).add("move", data, {
      ...TRANSIENT,
      jobId: runJobId(runId),
      // slots are served in order of Event receipt, across workers (attempt-priority.ts)
      priority: attemptPriority(opts.receivedAt),
      ...(opts.delayMs ? { delay: opts.delayMs } : {}),
    });
  }

  async pollNow(repo: string): Promise<void> {
    const data: PollJob = { repo: repo.toLowerCase() };
    await this.queue(QUEUE_NAMES.poll).add("poll", data, { ...TRANSIENT, jobId: pollNowJobId(repo) });
  }

  async deliver(deliveryId: number, opts: { delayMs?: number } = {}): Promise<void> {
    const data: DeliverJob = { deliveryId };
    await this.queue(QUEUE_NAMES.deliveries).add("deliver", data, {
      ...TRANSIENT,
      jobId: `delivery-${deliveryId}`,
      ...(opts.delayMs ? { delay: opts.delayMs } : {}),
    });
  }

  /** Reconciles installations with GitHub now (the installation worker does it). */
  async reconcileInstallations(): Promise<void> {
    const data: InstallationJob = { kind: "reconcile" };
    await this.queue(QUEUE_NAMES.installations).add("reconcile", data, { ...TRANSIENT, jobId: "reconcile-now" });
  }

  /**
   * One poll tick (the due repositories are in Postgres), one scheduler per
   * schedule Loop (its cron in its time zone), one hourly reconcile; stale ones are removed.
   */
  async syncSchedulers(): Promise<void> {
    const db = this.options.db;
    const schedules = new Map((await scheduleLoops({ db })).map((s) => [scheduleSchedulerId(s.repo, s.loop), s]));

    const poll = this.queue(QUEUE_NAMES.poll);
    await removeStale(poll, new Set([POLL_TICK_SCHEDULER_ID]));
    const tick: PollJob = {};
    await poll.upsertJobScheduler(POLL_TICK_SCHEDULER_ID, { every: pollTickMs(this.options.pollIntervalSeconds) }, { name: "poll", data: tick, opts: TRANSIENT });

    const ticks = this.queue(QUEUE_NAMES.schedules);
    await removeStale(ticks, new Set(schedules.keys()));
    for (const [id, s] of schedules) {
      const data: ScheduleJob = { repo: s.repo, loop: s.loop };
      await ticks.upsertJobScheduler(id, { pattern: s.cron, tz: s.tz }, { name: "tick", data, opts: TRANSIENT });
    }

    await this.queue(QUEUE_NAMES.installations).upsertJobScheduler(
      RECONCILE_SCHEDULER_ID,
      { every: RECONCILE_EVERY_MS },
      { name: "reconcile", data: { kind: "reconcile" } satisfies InstallationJob, opts: TRANSIENT },
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}

async function removeStale(queue: Queue, keep: ReadonlySet<string>): Promise<void> {
  for (const scheduler of await queue.getJobSchedulers(0, -1)) {
    const id = scheduler.id ?? scheduler.key;
    if (!keep.has(id)) await queue.removeJobScheduler(id);
  }
}

/** The senders of the Hints a Hint job absorbed, taken (read and removed) when the job runs. */
export async function takeHintSenders(client: Pick<IRedisClient, "multi">, prefix: string | undefined, jobId: string): Promise<string[]> {
  const key = hintSendersKey(prefix, jobId);
  const result = await client.multi().smembers(key).del(key).exec();
  const members = result?.[0]?.[1];
  return Array.isArray(members) ? members.filter((m): m is string => typeof m === "string") : [];
}
