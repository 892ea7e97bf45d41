import { NO_ENVIRONMENT, type EnvironmentSpec } from "../../executor/environment/environment-spec";
import type { Db } from "../kernel/db";
import { first, sql } from "../kernel/sql";
import type { Submission } from "./claim";

/** What an Attempt needs to prepare its environment, read from its Run's Event. */
export interface RunEnvironment {
  /** The Loop's `environment:`; null: none declared. */
  environment: EnvironmentSpec | null;
  /** Whether the Run's trigger may write the default branch's environment snapshot (trustedTrigger). */
  trusted: boolean;
}

const WRITERS = new Set(["write", "maintain", "admin"]);
/** GitHub's author_association of people with a role on the repository (or its organization). */
const INSIDERS = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);

/**
 * Whether a Run's trigger is trusted with the default branch's environment snapshot: a Tick
 * (declared by a writer), or a writer's act on an Item written by an insider, with no approval
 * asked for an outsider and no Run's Item in its chain: no text from a non-writer in its prompt.
 */
export function trustedTrigger(s: Pick<Submission, "actor" | "authorAssociation" | "approvalReason" | "chainDepth" | "branch">, kind: "item" | "tick"): boolean {
  if (s.branch) return false; // a pull request's branch, whatever its trigger
  if (kind === "tick") return !s.actor;
  if (!s.actor || !WRITERS.has(s.actor.permission)) return false;
  if (s.approvalReason) return false;
  if ((s.chainDepth ?? 0) > 0) return false;
  return s.authorAssociation !== null && s.authorAssociation !== undefined && INSIDERS.has(s.authorAssociation);
}

export async function runEnvironment(db: Db, runId: string): Promise<RunEnvironment> {
  const row = await first<{ submission: Submission; kind: "item" | "tick" }>(
    db.pool,
    sql`SELECT e.submission, e.kind FROM runs r JOIN events e ON e.id = r.event_id WHERE r.id = ${runId}`,
  );
  if (!row) return { environment: null, trusted: false };
  // an Event recorded before a key existed has none: its default
  const environment = row.submission.environment ? { ...NO_ENVIRONMENT, ...row.submission.environment } : null;
  return { environment, trusted: trustedTrigger(row.submission, row.kind) };
}
