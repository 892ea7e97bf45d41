import type { AgentReport } from "./adapters/types";
import type { MeteredUsage } from "./agent-sandbox/usage-meter";
import type { VerifyCheck, VerifyResult, VerifySpec } from "./verify-spec";

/**
 * verify and the agent's resumed rounds: run verify on the collected commit; when it fails and
 * the repository says `on_verify_failure: retry`, resume the agent with the failure as its next
 * message and collect and verify again, at most `max_verify_rounds` times. Pure control: the
 * executor passes the steps in.
 */

export interface VerifyRoundSteps<H> {
  /** Runs verify on a collected harvest, as its n-th run. */
  verify(collected: H, round: number): Promise<VerifyCheck>;
  /** Resumes the agent with `message`; false when it did not finish (failed, canceled): the rounds stop. */
  resume(message: string): Promise<boolean>;
  /** Collects the agent's work again, after a resumed round. */
  collect(): Promise<H>;
  /** Whether the Attempt must stop now (canceled, lease lost). */
  stopped(): boolean;
  /** A line for the transcript. */
  note(text: string): void;
}

export type VerifyRounds<H> = { tag: "Verified"; collected: H; result: VerifyResult } | { tag: "Stopped" };

/** A duration as the transcript says it: `1.2 s`. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** How a check ended, in a few words. */
export function verifyEnding(check: VerifyCheck): string {
  if (check.passed) return `passed in ${seconds(check.durationMs)}`;
  if (check.timedOut) return `failed: stopped at its time limit after ${seconds(check.durationMs)}`;
  return `failed${check.exitCode !== null ? ` with exit code ${check.exitCode}` : " (killed)"} after ${seconds(check.durationMs)}`;
}

/** A fence that no line of `text` can close. */
export function fenced(text: string, info = "text"): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${info}\n${text}\n${fence}`;
}

/** The message a resumed agent gets: what failed and how it ended. */
export function verifyFailureMessage(command: string, check: VerifyCheck): string {
  return [
    "Atelier checked your work by running the repository's verify command on the commit you made, in a fresh checkout, and it failed.",
    "",
    `Command: ${command}`,
    `Result: ${verifyEnding(check)}`,
    "",
    "The last lines of its output:",
    fenced(check.tail || "(no output)"),
    "",
    "Fix the cause in the repository (do not skip or weaken the check), commit, and say when you are done.",
  ].join("\n");
}

export async function verifyWithRounds<H>(spec: VerifySpec, first: H, steps: VerifyRoundSteps<H>): Promise<VerifyRounds<H>> {
  let collected = first;
  for (let round = 1; ; round++) {
    steps.note(`verify: running \`${spec.command}\` on the harvested commit, in a fresh checkout${round > 1 ? ` (round ${round})` : ""}`);
    const check = await steps.verify(collected, round);
    if (steps.stopped()) return { tag: "Stopped" };
    steps.note(`verify ${verifyEnding(check)}`);
    const result: VerifyResult = { ...check, command: spec.command, rounds: round };
    if (check.passed || spec.onFailure !== "retry") return { tag: "Verified", collected, result };
    if (round > spec.maxRounds) {
      steps.note(`verify failed after ${spec.maxRounds} resumed round${spec.maxRounds === 1 ? "" : "s"} of the agent (max_verify_rounds)`);
      return { tag: "Verified", collected, result };
    }
    steps.note(`resuming the agent with verify's failure (round ${round + 1} of at most ${spec.maxRounds + 1})`);
    if (!(await steps.resume(verifyFailureMessage(spec.command, check)))) return { tag: "Stopped" };
    if (steps.stopped()) return { tag: "Stopped" };
    collected = await steps.collect();
  }
}

/** Two rounds' gateway readings, added. */
export function addMetered(a: MeteredUsage | null, b: MeteredUsage | null): MeteredUsage | null {
  if (!a || !b) return a ?? b;
  return {
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
    requests: a.requests + b.requests,
    unread: a.unread + b.unread,
    model: b.model ?? a.model,
  };
}

/** Two rounds' reports: the later one's answer and session, the usage both claimed. */
export function addReports(a: AgentReport | null, b: AgentReport | null): AgentReport | null {
  if (!a || !b) return b ?? a;
  const u = a.usage;
  const v = b.usage;
  const usage =
    u && v
      ? {
          ...v,
          tokensIn: u.tokensIn + v.tokensIn,
          tokensOut: u.tokensOut + v.tokensOut,
          cacheRead: u.cacheRead + v.cacheRead,
          cacheWrite: u.cacheWrite + v.cacheWrite,
          costUsd: u.costUsd !== null && v.costUsd !== null ? u.costUsd + v.costUsd : null,
          costExact: u.costExact && v.costExact,
          turns: u.turns !== null && v.turns !== null ? u.turns + v.turns : null,
        }
      : (v ?? u);
  return { ...b, sessionId: b.sessionId ?? a.sessionId, usage };
}
