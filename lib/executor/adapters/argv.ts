import { agentFailure } from "../../engine/failure";
import { AttemptFailureError } from "../attempt-failure-error";
import { isSessionId } from "./session-id";
import type { AdapterAgent } from "./types";

/** Helpers for deriving and checking an agent's argv. */

export function configurationError(agent: Pick<AdapterAgent, "name">, message: string): AttemptFailureError {
  return new AttemptFailureError(agentFailure("configuration", `agent ${agent.name}: ${message}`));
}

/** Where a flag (`--x v`, `--x=v`, or a bare `--x`) first appears in args, and its value. */
export function findFlag(args: readonly string[], names: readonly string[]): { index: number; value: string | null } | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    for (const name of names) {
      if (arg === name) return { index: i, value: args[i + 1] ?? null };
      if (name.startsWith("--") && arg.startsWith(`${name}=`)) return { index: i, value: arg.slice(name.length + 1) };
    }
  }
  return null;
}

export interface ManagedFlag {
  names: readonly string[];
  /** What to write in the roster instead. */
  instead: string;
}

/** Refuses flags the adapter sets itself from the roster (so a Loop's choice cannot be shadowed). */
export function refuseManagedFlags(agent: AdapterAgent, args: readonly string[], managed: readonly ManagedFlag[]): void {
  for (const m of managed) {
    const found = findFlag(args, m.names);
    if (found) throw configurationError(agent, `remove ${args[found.index]} from command: ${m.instead}`);
  }
}

/** The model to pass: the Loop's pick when the agent allows it, else the roster's default. */
/** Whether the agent offers the model: its `model`, or one of its `models`. */
export function offersModel(agent: { model: string | null; models: readonly string[] }, model: string): boolean {
  return model === agent.model || agent.models.includes(model);
}

export function pickModel(agent: AdapterAgent, requested: string | null | undefined): string | null {
  if (requested === undefined || requested === null || requested === "") return agent.model;
  if (offersModel(agent, requested)) return requested;
  const allowed = [agent.model, ...agent.models].filter((m): m is string => !!m);
  throw configurationError(
    agent,
    allowed.length
      ? `the Loop asks for model ${requested}, which is not among the agent's models (${[...new Set(allowed)].join(", ")})`
      : `the Loop asks for model ${requested}, but the agent lists no models: add it to the roster's models:`,
  );
}

/** The session to resume, checked: a value that is no session id would be an argument of its own. */
export function resumeSessionOf(agent: Pick<AdapterAgent, "name">, session: string | null | undefined): string | null {
  if (session === undefined || session === null) return null;
  const shown = JSON.stringify(session.slice(0, 80));
  if (!isSessionId(session)) throw configurationError(agent, `the session to resume (${shown}) is not a session id`);
  return session;
}

/** The roster's non-secret env values, as strings. */
export function rosterEnv(agent: AdapterAgent): Record<string, string> {
  return { ...agent.env };
}
