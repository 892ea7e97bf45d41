import type { Redis } from "ioredis";
import type { AgentSpec, InstanceConfig } from "../config/roster";
import type { AttemptDeps, AttemptInput, AttemptOutcome } from "../executor/execute-attempt";
import type { SnapshotStore } from "../executor/environment/snapshot-store";
import type { Db } from "../store/kernel/db";
import type { Admission } from "../store/runs/claim";
import type { SessionBlobStore } from "./kept-sessions";
import type { WorkQueue } from "../work/work-queue";

/**
 * What the runner needs from the rest of Atelier, as small interfaces so that each piece can be
 * plugged in by the worker's wiring (GitHub through the App, or the simulator in the sandbox).
 */

/** An installation token limited to one repository, and where to clone it from. */
export interface RepositoryAccess {
  token: string;
  /** The repository's GitHub id, as registered: its cache and snapshots are keyed by it (ADR 0070). */
  repositoryId: string;
  /** https URL without credentials (file:// in some tests). */
  cloneUrl: string;
  /** The repository's default branch when the caller knows it. */
  defaultBranch?: string;
}

export interface PullRequestRequest {
  /** owner/name */
  repo: string;
  /** The Run's branch, pushed. */
  head: string;
  /** The branch the pull request goes into. */
  base: string;
  title: string;
  body: string;
  /** true: a draft (verify failed), opened as one or an open one turned into one; false: ready for review; absent: as it is. */
  draft?: boolean;
  runId: string;
  loop: string;
  /** The Item the Run works on; null for a schedule Tick. */
  itemNumber: number | null;
  /** A token for the same repository, minted for this Attempt. */
  token: string;
}

export interface PublishedPullRequest {
  number: number;
  url?: string;
}

export interface RunnerGitHub {
  /** The host of the GitHub API the App talks to: its registrations' ids are ids there (the roster's `allow:` is resolved on it). */
  readonly apiHost: string;
  mintToken(repo: string): Promise<RepositoryAccess>;
  /**
   * Opens the Run's pull request, or updates the open one; null when there is nothing to
   * open (the branch is missing or holds no commit beyond the base).
   */
  publishPullRequest(req: PullRequestRequest): Promise<PublishedPullRequest | null>;
  /**
   * Points the Run's branch at held commits a writer pushed (they are on GitHub already, under
   * their held ref), leased on its sha when the Attempt began (null: it did not exist);
   * ConflictError `branch_moved` when someone moved it meanwhile (ADR 0058).
   */
  setBranch(req: { repo: string; branch: string; sha: string; expected: string | null }): Promise<void>;
  /** Deletes a ref of the repository (held commits a writer pushed or discarded); one already gone is no error. */
  deleteRef(repo: string, ref: string): Promise<void>;
}

/** The Item a queued Event is about, as continueWithNewest asks the condition about it. */
export interface ConditionSubject {
  loop: string;
  /** owner/name, lower-cased */
  repo: string;
  itemKey: string;
  /** null for a schedule Tick */
  number: number | null;
}

/** Re-reads the Item from GitHub and evaluates the Loop's `if:` on it. */
export type RecheckCondition = (subject: ConditionSubject) => Promise<boolean>;

export type Executor = (input: AttemptInput, deps: AttemptDeps) => Promise<AttemptOutcome>;

/** A pino-compatible logger (the worker passes its pino instance). */
export interface RunnerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const SILENT_LOG: RunnerLog = { info() {}, warn() {}, error() {} };

export type Roster = Pick<InstanceConfig, "agents" | "maxConcurrentAttempts"> & Partial<Pick<InstanceConfig, "sandbox" | "registries" | "toolchains" | "concurrencyReserve" | "drainMinutes">>;

export interface RunnerConfig {
  /** Names this worker in the Attempt rows (host:pid by default). */
  workerId: string;
  /** Prefix of the runner's Redis keys and channels (default `atelier:`). */
  keyPrefix: string;
  leaseTtlMs: number;
  workspaceRoot: string;
  roster: Roster;
  /** How long continueWithNewest waits for the condition (default 5 s; then it counts as true). */
  recheckTimeoutMs?: number;
  transcript?: { flushMs?: number; maxLines?: number; maxBytes?: number };
  /** Where roster secrets are read (default process.env). */
  agentEnv?: NodeJS.ProcessEnv;
  /** Between SIGTERM and SIGKILL when an agent must stop. */
  killGraceMs?: number;
  /** Where environment snapshots are kept (snapshotStoreFromEnv); absent: none kept or restored. */
  snapshots?: SnapshotStore;
  /** The instance key that seals kept agent sessions (default ATELIER_SECRET_KEY: secretKey()). */
  sessionKey?: string;
  /** How often a running agent's session is saved at most (default DEFAULT_SESSION_SAVE_EVERY_MS). */
  sessionSaveEveryMs?: number;
}

export interface RunnerDeps {
  db: Db;
  /** A command connection (not a subscriber); the runner duplicates it for pub/sub. */
  redis: Redis;
  workQueue: Pick<WorkQueue, "moveRun">;
  github: RunnerGitHub;
  recheckCondition: RecheckCondition;
  /** The quota gate, asked when a queued Event opens its Run. */
  admission?: Admission;
  /** Replaces the executor (the engine bench measures with a no-op one). */
  execute?: Executor;
  /** Where agents' sessions are kept for the next Attempt (default: Postgres, postgresSessionStore). */
  sessionStore?: SessionBlobStore;
  log?: RunnerLog;
}

/** The roster's Agent of a Run, or null when the roster no longer has it. */
export function rosterAgent(roster: Roster, name: string): AgentSpec | null {
  return Object.hasOwn(roster.agents, name) ? roster.agents[name]! : null;
}
