import { afterAll, describe, expect, it } from "vitest";
import { admission } from "../../lib/metering/admission";
import { usageForViewer, type ViewerScope } from "../../lib/metering/usage-for-viewer";
import type { Viewer } from "../../lib/auth/viewer";
import { testDb } from "../support/db";
import { openRun, seedRepository, seedTenant, setLimits, succeedWithCost } from "./support";

/**
 * THREATS.md attack 33: an installation's limits carry its whole spend. A reader of one of its
 * repositories sees that repository's usage and limits, not the installation's spend; a person
 * who sees every repository of the installation sees its limits.
 */

const db = testDb();
afterAll(() => db.close());

const viewer = (login: string): Viewer => ({ id: login, login, name: null, avatarUrl: null, admin: false });
/** What GitHub lists for the viewer (lib/auth/viewer-scope.ts in the app), as given. */
const seeing = (repos: string[]): ViewerScope => ({
  scopeRepos: async () => repos,
  narrow: (scope, repo) => (repo ? scope.filter((r) => r === repo) : scope),
});

describe("installation-wide spend on Usage", () => {
  it("is shown only to those who see every repository of the installation", async () => {
    const t = await seedTenant(db, "spend");
    const secret = await seedRepository(db, t.installationId, t.account, "secret");
    await setLimits(db, { installationId: t.installationId }, { monthly_cost_usd: 100 });
    await setLimits(db, { repo: t.repo }, { monthly_cost_usd: 10 });
    await succeedWithCost(db, await openRun(db, t.repo, 1, admission()), 1);
    await succeedWithCost(db, await openRun(db, secret, 1, admission()), 42);

    const reader = await usageForViewer(db, viewer("reader"), seeing([t.repo]));
    expect(reader.totals.costUsd).toBe(1);
    expect(reader.caps.filter((c) => c.scope === "installation")).toEqual([]);
    expect(reader.caps.find((c) => c.scope === "repository" && c.limit === "monthly_cost_usd")).toMatchObject({ repo: t.repo, used: 1 });
    // no field anywhere says the installation's 43 (a random id may hold the digits "43")
    expect(JSON.stringify(reader)).not.toMatch(/:43[,}]/);

    const member = await usageForViewer(db, viewer("member"), seeing([t.repo, secret]));
    expect(member.caps.find((c) => c.scope === "installation" && c.limit === "monthly_cost_usd")).toMatchObject({ used: 43 });
  });
});
