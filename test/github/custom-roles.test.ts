import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleOfPermissionAnswer } from "../../lib/github/github-user-api";
import { rolesByGraphql } from "../../lib/github/repository-roles";
import { repositoryRoleOf } from "../../lib/triggers/actor";
import { installRepository, startFixture, type Fixture } from "./support/fixture";

/**
 * An organization's custom repository role counts as the role it is based on, read the same by
 * REST (its `role_name` names the custom role; `user.permissions` says what it grants) and by
 * GraphQL (the collaborator edge's `permission` is the base).
 */

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

describe("custom repository roles", () => {
  it("REST and GraphQL both read a custom role as its base, for each base", async () => {
    const { fullName: repo, installationId } = await installRepository(fx, { owner: "custom-roles", name: "app" });
    const bases = ["read", "triage", "write", "maintain"] as const;
    for (const base of bases) {
      fx.sim.createUser({ login: `cr-${base}` });
      fx.sim.setCustomRole({ repo, login: `cr-${base}`, role: `custom-${base}`, base });
    }
    const octokit = fx.github.installationOctokit(installationId);
    const rest = await Promise.all(bases.map((b) => repositoryRoleOf(octokit, repo, `cr-${b}`)));
    const graphql = await rolesByGraphql(fx.github, installationId, bases.map((b) => ({ fullName: repo, login: `cr-${b}` })));
    expect(rest).toEqual(["read", "triage", "write", "maintain"]);
    expect(graphql).toEqual(rest);
  });

  it("an answer without the user's permissions falls back on the legacy field, which is never stronger", () => {
    expect(roleOfPermissionAnswer({ permission: "write", role_name: "deployer" })).toBe("write");
    expect(roleOfPermissionAnswer({ permission: "read", role_name: "deployer", user: { permissions: { pull: true, triage: true, push: false } } })).toBe("triage");
    expect(roleOfPermissionAnswer({ permission: "write", role_name: "maintain" })).toBe("maintain");
    expect(roleOfPermissionAnswer({ permission: "admin" })).toBe("admin");
    expect(roleOfPermissionAnswer({ role_name: "auditor", user: { permissions: {} } })).toBe("none");
  });
});
