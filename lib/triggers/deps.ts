import type { InstanceConfig } from "../config/roster";
import type { GitHubApp } from "../github/app-client";
import { systemClock, type Clock } from "../github/clock";
import { GRAPHQL_BATCH, ItemSliceReader } from "../github/graphql-items";
import type { Log } from "../github/log";
import { RepositoryRoleReader } from "../github/repository-roles";
import type { Db } from "../store/kernel/db";
import type { Admission } from "../store/runs/claim";
import type { WorkQueue } from "../work/work-queue";
import { pollIntervals, type PollIntervals } from "./poll-interval";

/** What polling, Hints and schedules need; every part is a real seam (tests pass real ones). */
export interface TriggerDeps {
  db: Db;
  github: GitHubApp;
  /** GraphQL reads of Item payload slices, batched per installation. */
  slices: ItemSliceReader;
  /** People's roles by GraphQL, batched per installation (REST when GraphQL cannot tell). */
  roles: RepositoryRoleReader;
  workQueue: WorkQueue;
  /** The instance's roster: a Loop may only name one of its agents, an environment one of its toolchains. */
  roster: Pick<InstanceConfig, "agents" | "toolchains"> & Partial<Pick<InstanceConfig, "concurrencyReserve">>;
  /** Schedules read the time from here (tests move it); defaults to the system clock. */
  clock: Clock;
  log: Log;
  /** The admission gate (quotas) asked inside each claim; none by default. */
  admission?: Admission;
  /** A stored config older than this is read again at the next poll (default 10 minutes). */
  configTtlMs: number;
  /** Bounds of the adaptive poll intervals (default 60 s to MAX_POLL_INTERVAL_SECONDS). */
  pollIntervals: PollIntervals;
  /** Repositories polled at once, and Items of one repository evaluated at once. */
  repositoryConcurrency: number;
  /**
   * Default: as many as one GraphQL query reads (GRAPHQL_BATCH), so the actor lookups of a burst
   * of new Items share a query instead of waiting a lookup window each, a few at a time.
   */
  itemConcurrency: number;
}

export const DEFAULT_CONFIG_TTL_MS = 10 * 60_000;

/** Fills the defaults around the required seams. */
export function createTriggerDeps(
  input: Pick<TriggerDeps, "db" | "github" | "workQueue" | "roster"> & Partial<Omit<TriggerDeps, "db" | "github" | "workQueue" | "roster">>,
): TriggerDeps {
  return {
    ...input,
    slices: input.slices ?? new ItemSliceReader(input.github),
    roles: input.roles ?? new RepositoryRoleReader(input.github),
    clock: input.clock ?? systemClock,
    log: input.log ?? input.github.log,
    configTtlMs: input.configTtlMs ?? DEFAULT_CONFIG_TTL_MS,
    pollIntervals: input.pollIntervals ?? pollIntervals(60),
    repositoryConcurrency: input.repositoryConcurrency ?? 4,
    itemConcurrency: input.itemConcurrency ?? GRAPHQL_BATCH,
  };
}
