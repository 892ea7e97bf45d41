import type { VerifyFailureAction } from "../verify-spec";

/**
 * A repository's `environment:` (`.github/atelier.yml`, top level or per Loop), as validated:
 * how the Attempt's sandbox is prepared before the agent, and how Atelier checks the work.
 * Plain data: it travels in the Event's submission (JSON) to the Attempt.
 *
 * ```yaml
 * environment:
 *   setup: npm ci                   # shell, run in the sandbox from the checkout, before the agent
 *   cache: [node_modules]           # what setup fills and the next Attempt restores (~/… is the sandbox's home)
 *   key: [package-lock.json]        # files whose content (with setup's text) keys the snapshot
 *   verify: npm test                # how Atelier checks the agent's work (verify-spec.ts)
 *   on_verify_failure: retry        # retry (resume the agent with the failure) | draft (default)
 *   max_verify_rounds: 1            # with retry: how many times at most (default 1)
 *   env: { NODE_ENV: test }         # values that are not secrets
 *   toolchain: node-22              # the instance's toolchains to mount (a name or a list; toolchains.ts)
 * ```
 */
export interface EnvironmentSpec {
  /** Shell text run by /bin/sh -e in the checkout; null: nothing to prepare. */
  setup: string | null;
  /** Paths setup fills, relative to the checkout or `~/…` (the sandbox's home); null: detected. */
  cache: string[] | null;
  /** Files (relative to the checkout) whose content keys the snapshot; null: detected. */
  key: string[] | null;
  /** The command that checks the agent's work; null: none declared. */
  verify: string | null;
  /** What a failed verify does (draft when null). */
  onVerifyFailure: VerifyFailureAction | null;
  /** With `retry`: how many times at most the agent is resumed (1 when null). */
  maxVerifyRounds: number | null;
  /** Non-secret values given to setup (and verify). */
  env: Record<string, string>;
  /** Names of the roster's toolchains, mounted for setup, the agent and verify, first on PATH first. */
  toolchains: string[];
}

/** The keys `environment:` takes, in the order the docs give them. */
export const ENVIRONMENT_KEYS = ["setup", "cache", "key", "verify", "on_verify_failure", "max_verify_rounds", "env", "toolchain"] as const;

/** The spec a Loop has when neither it nor the file says anything. */
export const NO_ENVIRONMENT: Readonly<EnvironmentSpec> = Object.freeze({ setup: null, cache: null, key: null, verify: null, onVerifyFailure: null, maxVerifyRounds: null, env: {}, toolchains: [] });

/**
 * A Loop's environment: the file's `environment:` with the Loop's own over it, key by key (env:
 * by variable); null when neither says anything.
 */
export function mergeEnvironment(top: Partial<EnvironmentSpec> | null, own: Partial<EnvironmentSpec> | null): EnvironmentSpec | null {
  if (!top && !own) return null;
  return { ...NO_ENVIRONMENT, ...top, ...own, env: { ...top?.env, ...own?.env } };
}

/** The transcript stream of setup's output: the Run page shows it as a group of its own, with its duration. */
export const SETUP_STREAM = "setup";
