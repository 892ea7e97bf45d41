import { requireAdmin } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/kernel/db";
import { getQuota, limitsJson, setQuota, type QuotaInput, type QuotaOwner } from "./quota-settings";

/** The quota API's services: anyone signed in may not; the instance's admins may read and set. */

export interface QuotaJson {
  scope: QuotaOwner["kind"];
  installation_id?: number;
  repo?: string;
  limits: Required<QuotaInput>;
  /** 0 = unlimited */
  unlimited_is: 0;
}

const toJson = (owner: QuotaOwner, limits: Parameters<typeof limitsJson>[0]): QuotaJson => ({
  scope: owner.kind,
  ...(owner.kind === "installation" ? { installation_id: owner.installationId } : { repo: owner.repo.toLowerCase() }),
  limits: limitsJson(limits),
  unlimited_is: 0,
});

export async function readQuota(db: Db, viewer: Viewer | null, owner: QuotaOwner): Promise<QuotaJson> {
  requireAdmin(viewer);
  return toJson(owner, (await getQuota(db, owner)).limits);
}

export async function writeQuota(db: Db, viewer: Viewer | null, owner: QuotaOwner, input: QuotaInput): Promise<QuotaJson> {
  requireAdmin(viewer);
  return toJson(owner, (await setQuota(db, owner, input)).limits);
}
