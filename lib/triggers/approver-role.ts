import type { RepoRoleName } from "../loops/config-schema";
import type { Db } from "../store/kernel/db";
import { storedConfig } from "../store/items/repository-configs";
import { approvalFacts } from "../store/runs/approvals";
import { roleRank } from "./actor";

/**
 * The role a person must reach to approve a Run: its Loop's `trigger_permission` — as the Run's
 * Event recorded it when its actor fell short, and as the repository's config says now,
 * whichever is higher — and never less than write. An approval starts the agent exactly as the
 * Loop's trigger would have, so a writer cannot approve a Loop kept for maintainers.
 */
export async function approverNeeds(db: Db, runId: string): Promise<RepoRoleName> {
  const facts = await approvalFacts(db, runId);
  if (!facts) return "write";
  const loop = (await storedConfig(db, facts.repo))?.loops.find((l) => l.name === facts.loop);
  const asked: string[] = ["write", facts.needs ?? "write", loop?.triggerPermission ?? "write"];
  return asked.reduce((a, b) => (roleRank(b) > roleRank(a) ? b : a)) as RepoRoleName;
}

/** Whether a role reaches what approving the Run needs. */
export const reachesApproval = (role: string, needs: RepoRoleName): boolean => roleRank(role) >= roleRank(needs);
