import { isClosed } from "../../engine/run-predicates";
import { runEnding } from "../../engine/run-ending";
import { storedVerify, verifyVerdict, type VerifyVerdict } from "../../executor/verify-spec";
/**
 * What an outbound webhook says about a Run that reached a terminal state. Built once, in the
 * transaction of that state, and stored on the delivery row: every try sends the same facts.
 */

export const TERMINAL_EVENTS = { Succeeded: "run.succeeded", Failed: "run.failed", Canceled: "run.canceled" } as const;
export type TerminalState = keyof typeof TERMINAL_EVENTS;
export type RunEventName = (typeof TERMINAL_EVENTS)[TerminalState];

/** A terminal state is a closed one (lib/engine/run-predicates.ts); TERMINAL_EVENTS names an event for each. */
export const isTerminalState = (s: string): s is TerminalState => isClosed(s);

export interface RunEventPayload {
  event: RunEventName;
  occurred_at: string;
  installation: { id: number } | null;
  run: {
    id: string;
    loop: string;
    repo: string;
    number: number | null;
    state: TerminalState;
    /** Always true: the Run is in the terminal set (Succeeded, Failed, Canceled). */
    closed: true;
    /** Why it did not succeed: the failure's category when Failed, `canceled` when Canceled; null when Succeeded. */
    category: string | null;
    /** Whether Atelier retries that category by itself (null when Succeeded). */
    retryable: boolean | null;
    /** OperatorCanceled, Superseded or Revoked when Canceled */
    cancel_reason: string | null;
    /** the last Attempt's failure when Failed; Atelier's own (DefectFailure, internal) when engine failures failed the Run between Attempts */
    failure: { kind: string; category: string; retryable: boolean; message: string | null } | null;
    usage: {
      attempts: number;
      duration_ms: number;
      tokens_in: number | null;
      tokens_out: number | null;
      cost_usd: number | null;
      /** true when any part of cost_usd is an estimate (minutes × the roster's price) */
      cost_estimated: boolean;
    };
    pull_request: { number: number; branch: string | null; head_sha: string | null } | null;
    /**
     * When Succeeded, how Atelier checked the agent's work: `passed` (the agent succeeded and
     * verify passed), `failed` (the agent succeeded and verify failed: the pull request is a
     * draft) or `not_declared` (no verify); null otherwise.
     */
    verify: {
      result: VerifyVerdict;
      command: string | null;
      exit_code: number | null;
      timed_out: boolean;
      duration_ms: number | null;
      rounds: number | null;
    } | null;
    received_at: string;
    started_at: string | null;
    ended_at: string | null;
  };
}

/** The Run as the terminal-state query reads it (timestamps already ISO text, UTC). */
export interface TerminalRunRow {
  id: string;
  loop: string;
  repo: string;
  number: number | null;
  state: string;
  cancel_reason: string | null;
  installation_id: number | null;
  pull_request_number: number | null;
  branch: string | null;
  head_sha: string | null;
  received_at: string;
  started_at: string | null;
  ended_at: string | null;
  now: string;
  failure: { kind: string | null; category: string | null; retryable: boolean | null; message: string | null } | null;
  usage: { attempts: number; duration_ms: number; tokens_in: number | null; tokens_out: number | null; cost_usd: number | null; cost_estimated: boolean };
  /** the last Attempt's verify, as stored */
  verify?: unknown;
}

/** Bodies are at most 64 KB; only a failure message is long enough to need cutting. */
export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_MESSAGE_CHARS = 4000;

const cut = (s: string | null, n: number): string | null => (s && s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function runEventPayload(row: TerminalRunRow): RunEventPayload {
  if (!isTerminalState(row.state)) throw new Error(`Run ${row.id} is ${row.state}, not in a terminal state`);
  const f = row.state === "Failed" ? row.failure : null;
  const ending = runEnding(row.state, f);
  const payload: RunEventPayload = {
    event: TERMINAL_EVENTS[row.state],
    occurred_at: row.ended_at ?? row.now,
    installation: row.installation_id === null ? null : { id: row.installation_id },
    run: {
      id: row.id,
      loop: row.loop,
      repo: row.repo,
      number: row.number,
      state: row.state,
      closed: true,
      category: ending.category,
      retryable: ending.retryable,
      cancel_reason: row.state === "Canceled" ? row.cancel_reason : null,
      failure:
        f && f.kind
          ? { kind: f.kind, category: f.category ?? "internal", retryable: f.retryable ?? false, message: cut(f.message, MAX_MESSAGE_CHARS) }
          : null,
      usage: { ...row.usage },
      pull_request:
        row.pull_request_number === null ? null : { number: row.pull_request_number, branch: row.branch, head_sha: row.head_sha },
      verify: row.state === "Succeeded" ? verifyOf(row.verify) : null,
      received_at: row.received_at,
      started_at: row.started_at,
      ended_at: row.ended_at,
    },
  };
  return fitBody(payload);
}

function verifyOf(stored: unknown): NonNullable<RunEventPayload["run"]["verify"]> {
  const v = storedVerify(stored);
  return {
    result: verifyVerdict(v),
    command: v?.command ?? null,
    exit_code: v?.exitCode ?? null,
    timed_out: v?.timedOut ?? false,
    duration_ms: v?.durationMs ?? null,
    rounds: v?.rounds ?? null,
  };
}

/** Cuts the failure message until the body fits in MAX_BODY_BYTES. */
function fitBody(p: RunEventPayload): RunEventPayload {
  let size = Buffer.byteLength(JSON.stringify(p));
  while (size > MAX_BODY_BYTES && p.run.failure?.message) {
    const m = p.run.failure.message;
    p.run.failure.message = cut(m, Math.floor(m.length / 2));
    size = Buffer.byteLength(JSON.stringify(p));
  }
  return p;
}
