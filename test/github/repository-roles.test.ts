import { describe, expect, it } from "vitest";
import { roleOfEdge } from "../../lib/github/repository-roles";

/**
 * Which collaborator edge of GraphQL is believed (the rest is asked of REST): a custom role
 * hides behind its base's `permission`, and an organization's repository shows the sources
 * only to a caller that may read the organization's administration.
 */
describe("a collaborator edge's role", () => {
  const edge = (sources: { roleName?: string | null }[] | null) => ({ permission: "WRITE", permissionSources: sources, node: { login: "someone" } });

  it("is its permission when every source names one of GitHub's five roles", () => {
    expect(roleOfEdge(edge([{ roleName: "write" }]), true)).toBe("write");
    expect(roleOfEdge(edge([{ roleName: "read" }, { roleName: "write" }]), true)).toBe("write");
  });

  it("is REST's to tell for a custom role", () => {
    expect(roleOfEdge(edge([{ roleName: "deployer" }]), true)).toBeUndefined();
    expect(roleOfEdge(edge([{ roleName: "write" }, { roleName: null }]), true)).toBeUndefined();
  });

  it("is REST's to tell on an organization's repository whose edge shows no source; a user's repository has no custom roles", () => {
    expect(roleOfEdge(edge([]), true)).toBeUndefined();
    expect(roleOfEdge(edge(null), true)).toBeUndefined();
    expect(roleOfEdge(edge([]), false)).toBe("write");
  });
});
