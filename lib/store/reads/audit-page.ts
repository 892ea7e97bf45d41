import type { Db } from "../kernel/db";

/** The audit log as the dashboard reads it: a page of the repositories' entries, or a Run's. */

export interface AuditRow {
  id: string;
  at: Date;
  actor: string;
  action: string;
  repo: string | null;
  runId: string | null;
  detail: unknown;
}

const COLUMNS = { id: true, at: true, actor: true, action: true, repo: true, runId: true, detail: true } as const;

const toRow = (e: { id: bigint; at: Date; actor: string; action: string; repo: string | null; runId: string | null; detail: unknown }): AuditRow => ({
  ...e,
  id: e.id.toString(),
});

/** The repositories' entries, newest first, with ids below `before` (an entry's id) when given; at most `take`. */
export async function auditOfRepos(db: Db, repos: string[], before: string | null, take: number): Promise<AuditRow[]> {
  const entries = await db.prisma.auditEntry.findMany({
    where: { repo: { in: repos }, ...(before === null ? {} : { id: { lt: BigInt(before) } }) },
    orderBy: { id: "desc" },
    take,
    select: COLUMNS,
  });
  return entries.map(toRow);
}

/** The Run's entries, newest first; at most `take`. */
export async function auditOfRun(db: Db, runId: string, take: number): Promise<AuditRow[]> {
  const entries = await db.prisma.auditEntry.findMany({ where: { runId }, orderBy: { id: "desc" }, take, select: COLUMNS });
  return entries.map(toRow);
}
