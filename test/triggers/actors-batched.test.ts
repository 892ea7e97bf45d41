import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, startFixture, START_DEV_CONFIG, type Fixture } from "../github/support/fixture";

/**
 * ADR 0009 through the batched lookups: who labeled an Item found by polling alone comes from
 * the Item's GraphQL timeline, and their role from a GraphQL collaborators query; REST answers
 * only what GraphQL cannot (a person the repository does not list).
 */

const EVENTS = "GET /repos/{owner}/{repo}/issues/{issue_number}/events";
const PERMISSION = "GET /repos/{owner}/{repo}/collaborators/{username}/permission";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
  for (const who of ["b-writer", "b-triager", "b-stranger", "b-deployer"]) fx.sim.createUser({ login: who });
});
afterAll(() => fx.close());

async function runOn(repo: string, number: number) {
  const { rows } = await fx.db.pool.query<{ approval_required: boolean; actor: { login: string; permission: string; source: string } }>(
    `SELECT r.approval_required, e.submission->'actor' AS actor FROM runs r JOIN events e ON e.id = r.event_id WHERE r.repo = $1 AND r.number = $2`,
    [repo, number],
  );
  return rows[0];
}

describe("who caused a match, batched", () => {
  it("a triager's label on a writer's issue, found by polling alone, waits for approval with no REST lookup", async () => {
    const { fullName: repo } = await installRepository(fx, { owner: "batched", name: "private" });
    fx.sim.setUserPermission({ repo, login: "b-writer", permission: "write" });
    fx.sim.setUserPermission({ repo, login: "b-triager", permission: "triage" });
    const issue = fx.sim.createIssue({ login: "b-writer", repo, title: "Written by a writer" });
    await pollRepository(fx.deps, repo);
    fx.sim.addLabels({ login: "b-triager", repo, number: issue.number, labels: ["ready-for-agent"] });
    fx.sim.resetCounters();
    await pollRepository(fx.deps, repo);

    expect(await runOn(repo, issue.number)).toMatchObject({ approval_required: true, actor: { login: "b-triager", permission: "triage", source: "timeline" } });
    expect(fx.sim.counters.byRoute[EVENTS] ?? 0).toBe(0);
    expect(fx.sim.counters.byRoute[PERMISSION] ?? 0).toBe(0);
  });

  it("a person the repository does not list is asked by REST: a stranger on a public repository reads, and waits", async () => {
    fx.sim.createOrg({ login: "batched-public" });
    await fx.sim.createRepo({ owner: "batched-public", name: "site", private: false, files: { ".github/atelier.yml": START_DEV_CONFIG } });
    fx.sim.createInstallation({ account: "batched-public", repos: ["site"] });
    const { reconcileInstallations } = await import("../../lib/github/installation-sync");
    await reconcileInstallations(fx.deps);
    const repo = "batched-public/site";
    await pollRepository(fx.deps, repo);
    const issue = fx.sim.createIssue({ login: "b-stranger", repo, title: "From outside", labels: ["ready-for-agent"] });
    fx.sim.resetCounters();
    await pollRepository(fx.deps, repo);

    expect(await runOn(repo, issue.number)).toMatchObject({ approval_required: true, actor: { login: "b-stranger", permission: "read" } });
    expect(fx.sim.counters.byRoute[PERMISSION]).toBe(1);
    expect(fx.sim.counters.byRoute[EVENTS] ?? 0).toBe(0);
  });

  it("a custom role counts as the role it is based on: one based on write labels, and the Run starts without approval or a REST lookup", async () => {
    const { fullName: repo } = await installRepository(fx, { owner: "batched", name: "custom-roles" });
    fx.sim.setUserPermission({ repo, login: "b-writer", permission: "write" });
    fx.sim.setCustomRole({ repo, login: "b-deployer", role: "deployer", base: "write" });
    const issue = fx.sim.createIssue({ login: "b-writer", repo, title: "Written by a writer" });
    await pollRepository(fx.deps, repo);
    fx.sim.addLabels({ login: "b-deployer", repo, number: issue.number, labels: ["ready-for-agent"] });
    fx.sim.resetCounters();
    await pollRepository(fx.deps, repo);

    expect(await runOn(repo, issue.number)).toMatchObject({ approval_required: false, actor: { login: "b-deployer", permission: "write" } });
    expect(fx.sim.counters.byRoute[PERMISSION] ?? 0).toBe(0);
  });
});
