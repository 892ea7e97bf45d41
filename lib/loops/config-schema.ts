import { z } from "zod";
import type { EnvironmentSpec } from "../executor/environment/environment-spec";

/**
 * The shape of a repository's `.github/atelier.yml`, and what validating it produces.
 *
 * ```yaml
 * environment:                      # how the Attempt's sandbox is prepared (docs/environments.md)
 *   setup: npm ci
 *   verify: npm test                # how Atelier checks the agent's work, in a fresh sandbox
 *   on_verify_failure: retry        # retry (resume the agent with the failure) | draft (default)
 *   max_verify_rounds: 1            # with retry: how many times at most (default 1)
 * labels:
 *   - { name: ready-for-agent, color: 0e8a16, description: Atelier may start }
 * loops:
 *   start-dev:
 *     on: issues                      # issues | pull_requests | comments | { schedule: { cron, tz } }
 *     if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
 *     agent: claude                   # a name from the instance's roster
 *     model: claude-opus-4-1          # optional: one of the models the roster lists for the agent
 *     approval: required              # required | none (default none; required on a public repository)
 *     trigger_permission: write       # who may start it without approval: read | triage | write | maintain | admin
 *     allow_bot_items: false          # the App's own Items (its bot, its atelier/* branches) never match unless true
 *     max_chain_depth: 1              # a Run on an Item a Run created is refused past this depth
 *     continue: same-branch           # pull_requests and comments Loops: work on the App's own pull request's branch
 *     push: after_review              # after_review | immediately (default: after review when a non-writer's text steered the Run)
 *     max_cycles: 3                   # Runs per Item between operator resets (default 3)
 *     feedback: { comment: true }     # comment on the Item (default true)
 *     prompt: Implement #${{ item.number }}
 *     environment: { verify: npm run test:unit }   # over the file's environment:, key by key
 *   nightly:
 *     on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }
 *     repositories: [acme/api]        # schedule Loops only; default: this repository
 *     agent: claude
 *     prompt: Triage ${{ repository.full_name }}
 * ```
 */

export const CONFIG_PATH = ".github/atelier.yml";

/** Loop and agent names. */
export const LOOP_NAME = /^[a-z0-9][a-z0-9-_]{0,62}$/i;
/** "owner/name" as GitHub allows them. */
export const REPOSITORY_FULL_NAME = /^[a-z0-9][a-z0-9_-]{0,38}\/[a-z0-9._-]{1,100}$/i;
export const LABEL_COLOR = /^[0-9a-f]{6}$/i;
export const LABEL_NAME_MAX = 50;
export const LABEL_DESCRIPTION_MAX = 100;
export const DEFAULT_MAX_CYCLES = 3;
export const DEFAULT_TIME_ZONE = "UTC";
export const DEFAULT_MAX_CHAIN_DEPTH = 1;

/** GitHub's repository roles, weakest first (GET /repos/{o}/{r}/collaborators/{u}/permission's role_name). */
export const REPO_ROLES = ["none", "read", "triage", "write", "maintain", "admin"] as const;
export type RepoRoleName = (typeof REPO_ROLES)[number];
export type TriggerPermission = Exclude<RepoRoleName, "none">;
export const DEFAULT_TRIGGER_PERMISSION: TriggerPermission = "write";

export type LoopTrigger =
  | { kind: "issues" }
  | { kind: "pull_requests" }
  | {
      kind: "comments";
      /** true (the default): only a comment that mentions the App (`@<slug>`) is ready */
      mention: boolean;
    }
  | {
      kind: "schedule";
      cron: string;
      tz: string;
      /** Lower-cased "owner/name"s; null means the repository that holds the config. */
      repositories: string[] | null;
    };

export type TriggerKind = LoopTrigger["kind"];

/** Where a Loop's Run puts its work: a branch of its own, or the branch of the pull request it is on. */
export const LOOP_CONTINUATIONS = ["new-branch", "same-branch"] as const;
export type LoopContinuation = (typeof LOOP_CONTINUATIONS)[number];

/** A valid Loop, with its defaults filled in. Plain data: it can be stored as JSON. */
export interface LoopDefinition {
  name: string;
  trigger: LoopTrigger;
  /** The `if:` source; null means always. */
  if: string | null;
  agent: string;
  /** The model picked among those the agent lists in the roster (`model:`, `models:`); absent: its default. */
  model?: string | null;
  approval: "required" | "none";
  /** false when `approval:` was not written (then a public repository requires it). Absent in configs stored before. */
  approvalGiven?: boolean;
  /** The weakest role whose actor starts the Loop without approval (default write). */
  triggerPermission?: TriggerPermission;
  /** Whether the App's own Items (its bot's, its atelier/* branches) may match (default false). */
  allowBotItems?: boolean;
  /** How deep a chain of Runs (a Run on an Item a Run created) may go (default 1). */
  maxChainDepth?: number;
  /**
   * `same-branch`: the Loop continues the work of the App's own pull requests (and sees no other
   * Item): its Run starts from the pull request's head branch and pushes to it (ADR 0019).
   * Absent (`new-branch`): every Run works on a branch of its own.
   */
  continue?: LoopContinuation;
  /**
   * When the Run's commits reach a branch (where CI runs them with the repository's secrets):
   * `after_review`, always after a writer saw them; `immediately`, as soon as they are made,
   * even when a non-writer's text steered the agent. Absent: after review when it was steered (ADR 0058).
   */
  push?: LoopPush;
  maxCycles: number;
  prompt: string;
  feedback: { comment: boolean };
  /** Line of the Loop in the file, when known. */
  line: number | null;
  /** The file's `environment:` with the Loop's own over it; absent or null: none declared. */
  environment?: EnvironmentSpec | null;
}

export interface LabelSpec {
  name: string;
  /** Six lower-case hex digits, no "#". */
  color: string;
  description: string | null;
}

export type LoopConfigErrorToken =
  | "config_invalid_yaml"
  | "config_unknown_key"
  | "config_bad_expression"
  | "config_unknown_agent"
  | "config_unknown_model"
  | "config_unknown_toolchain"
  | "config_bad_cron"
  | "config_bad_timezone"
  | "config_foreign_repository"
  | "config_agent_not_allowed"
  | "config_extends_forbidden"
  | "config_invalid";

export interface LoopConfigError {
  /** The Loop the error is about; null for the file (YAML, top-level keys, labels). */
  loop: string | null;
  token: LoopConfigErrorToken;
  /** 1-based line in `.github/atelier.yml`, when known. */
  line: number | null;
  /** A sentence that says what to fix. */
  message: string;
  /** Where, as a dotted path ("loops.start-dev.agent"); "" for the whole file. */
  path: string;
}

export interface RepositoryConfig {
  labels: LabelSpec[];
  /** `dashboard_issue: true`: the App keeps one issue listing what waits on people here (docs/notifications.md) */
  dashboardIssue: boolean;
  /** Only the valid Loops: a broken Loop never prevents the others. */
  loops: LoopDefinition[];
  errors: LoopConfigError[];
}

/** Top-level keys. `_extends` is Probot's config inheritance, resolved before validation. */
export const TOP_LEVEL_KEYS = ["labels", "loops", "environment", "dashboard_issue", "_extends"] as const;

export const labelSchema = z.strictObject({
  name: z.string(),
  color: z.union([z.string(), z.number()]),
  description: z.string().nullable().optional(),
});

/** A Loop's keys. `on` is checked by hand, to give a precise sentence for each mistake. */
/** A Loop's `push:` (ADR 0058); absent: after review when a non-writer's text steered the Run. */
export const LOOP_PUSHES = ["after_review", "immediately"] as const;
export type LoopPush = (typeof LOOP_PUSHES)[number];

export const loopSchema = z.strictObject({
  on: z.unknown(),
  if: z.union([z.string(), z.boolean()]).optional(),
  agent: z.string().min(1),
  model: z.string().min(1).optional(),
  approval: z.enum(["required", "none"]).optional(),
  max_cycles: z.number().int().min(1).optional(),
  prompt: z.string().min(1),
  feedback: z.strictObject({ comment: z.boolean() }).optional(),
  repositories: z.array(z.string()).optional(),
  trigger_permission: z.enum(["read", "triage", "write", "maintain", "admin"]).optional(),
  allow_bot_items: z.boolean().optional(),
  max_chain_depth: z.number().int().min(0).optional(),
  continue: z.enum(LOOP_CONTINUATIONS).optional(),
  /** checked by validate/environment.ts */
  environment: z.unknown().optional(),
  push: z.enum(LOOP_PUSHES).optional(),
});

export const LOOP_KEYS = Object.keys(loopSchema.shape);
export const LABEL_KEYS = Object.keys(labelSchema.shape);
export const SCHEDULE_KEYS = ["cron", "tz"] as const;
export const COMMENTS_KEYS = ["mention"] as const;
