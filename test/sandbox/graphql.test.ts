import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api, demoInstallationId, probotFor } from "./support/probot";

let sim: Simulator;
let token: string;

const ITEM = `number title body state author { login } labels(first: 100) { nodes { name } } createdAt updatedAt closedAt url`;

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  token = sim.createInstallationToken({ account: "demo-org" }).token;
  await sim.openPullRequest({ repo: "demo-org/webapp", head: "feature/gql", title: "A PR", labels: ["ready-for-agent"] });
});

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
});

async function graphql(query: string, variables?: Record<string, unknown>, auth = token): Promise<{ status: number; body: { data?: Record<string, unknown>; errors?: Array<Record<string, unknown>> }; headers: Headers }> {
  const res = await api(sim, "/graphql", { token: auth, method: "POST", body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown> }, headers: res.headers };
}

describe("GraphQL", () => {
  it("reads three items in one call through aliases, with rateLimit, and counts one call", async () => {
    sim.resetCounters();
    const { status, body, headers } = await graphql(`query {
      repository(owner: "demo-org", name: "webapp") {
        a1: issue(number: 1) { ${ITEM} }
        a2: issueOrPullRequest(number: 2) { __typename ... on Issue { ${ITEM} } ... on PullRequest { number } }
        a3: pullRequest(number: 3) { ${ITEM} isDraft headRefName headRefOid baseRefName mergeable merged mergedAt }
      }
      rateLimit { cost remaining resetAt }
    }`);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const repo = body.data?.repository as Record<string, Record<string, unknown>>;
    expect(repo.a1).toMatchObject({ number: 1, title: "Add a dark mode toggle", state: "OPEN", author: { login: "octo-admin" }, labels: { nodes: [{ name: "enhancement" }] }, closedAt: null });
    expect(repo.a2).toMatchObject({ __typename: "Issue", number: 2, author: { login: "octo-writer" } });
    expect(repo.a3).toMatchObject({ number: 3, state: "OPEN", isDraft: false, headRefName: "feature/gql", baseRefName: "main", merged: false, mergedAt: null, labels: { nodes: [{ name: "ready-for-agent" }] } });
    expect(repo.a3?.headRefOid).toMatch(/^[0-9a-f]{40}$/);
    expect(["UNKNOWN", "MERGEABLE"]).toContain(repo.a3?.mergeable);
    const rate = body.data?.rateLimit as { cost: number; remaining: number; resetAt: string };
    expect(rate.cost).toBe(1);
    expect(rate.remaining).toBe(4999);
    expect(headers.get("x-ratelimit-resource")).toBe("graphql");
    expect(sim.counters.graphql).toBe(1);
    expect(sim.counters.byCaller[`installation:${demoInstallationId(sim)}`]?.graphql).toBe(1);
  });

  it("a missing number gives partial data and an errors entry, with status 200", async () => {
    const { status, body } = await graphql(`{ repository(owner: "demo-org", name: "webapp") {
      ok: issue(number: 1) { number }
      gone: issue(number: 999) { number }
      notAPull: pullRequest(number: 1) { number }
    } }`);
    expect(status).toBe(200);
    expect(body.data).toEqual({ repository: { ok: { number: 1 }, gone: null, notAPull: null } });
    expect(body.errors).toEqual([
      expect.objectContaining({ type: "NOT_FOUND", path: ["repository", "gone"], message: "Could not resolve to an Issue with the number of 999." }),
      expect.objectContaining({ type: "NOT_FOUND", path: ["repository", "notAPull"] }),
    ]);
  });

  it("hides repositories outside the token's scope, refuses first > 100, and works through Probot's octokit.graphql", async () => {
    const narrowed = sim.createInstallationToken({ account: "demo-org", repositories: ["api"] }).token;
    const hidden = await graphql(`{ repository(owner: "demo-org", name: "webapp") { issue(number: 1) { number } } }`, undefined, narrowed);
    expect(hidden.body.data).toEqual({ repository: null });
    expect(hidden.body.errors?.[0]).toMatchObject({ type: "NOT_FOUND" });
    const tooMany = await graphql(`{ repository(owner: "demo-org", name: "webapp") { issue(number: 1) { labels(first: 101) { nodes { name } } } } }`);
    expect(tooMany.body.errors?.[0]?.message).toMatch(/exceeds the `first` limit of 100/);
    const octokit = await probotFor(sim).auth(demoInstallationId(sim));
    const result = await octokit.graphql<{ repository: { issue: { title: string } } }>(
      `query($owner: String!, $name: String!, $n: Int!) { repository(owner: $owner, name: $name) { issue(number: $n) { title } } }`,
      { owner: "demo-org", name: "api", n: 1 },
    );
    expect(result.repository.issue.title).toBe("Return 404 for unknown users");
  });

  it("serves an Item's timeline events with their actors, filtered by itemTypes, and collaborators with their permission", async () => {
    sim.addLabels({ login: "octo-writer", repo: "demo-org/webapp", number: 1, labels: ["bug"] });
    sim.editIssue({ login: "octo-reader", repo: "demo-org/webapp", number: 1, title: "Add a dark mode switch" });
    const { body } = await graphql(`{ repository(owner: "demo-org", name: "webapp") {
      issue(number: 1) {
        all: timelineItems(last: 10, itemTypes: [LABELED_EVENT, RENAMED_TITLE_EVENT]) { nodes { __typename ... on LabeledEvent { createdAt actor { login } label { name } } ... on RenamedTitleEvent { actor { login } previousTitle currentTitle } } }
        renames: timelineItems(last: 10, itemTypes: [RENAMED_TITLE_EVENT]) { nodes { __typename } }
      }
      collaborators(query: "OCTO-W", first: 10) { edges { permission permissionSources { roleName } node { login } } }
    } }`);
    expect(body.errors).toBeUndefined();
    const repo = body.data?.repository as { issue: Record<string, { nodes: Record<string, unknown>[] }>; collaborators: { edges: unknown[] } };
    expect(repo.issue.all!.nodes.slice(-2)).toMatchObject([
      { __typename: "LabeledEvent", actor: { login: "octo-writer" }, label: { name: "bug" } },
      { __typename: "RenamedTitleEvent", actor: { login: "octo-reader" }, previousTitle: "Add a dark mode toggle", currentTitle: "Add a dark mode switch" },
    ]);
    expect(repo.issue.renames!.nodes.every((n) => n.__typename === "RenamedTitleEvent")).toBe(true);
    expect(repo.collaborators.edges).toEqual([{ permission: "WRITE", permissionSources: [{ roleName: "write" }], node: { login: "octo-writer" } }]);
  });

  it("refuses an anonymous call", async () => {
    const res = await fetch(`${sim.url}/graphql`, { method: "POST", body: JSON.stringify({ query: "{ rateLimit { cost } }" }) });
    expect(res.status).toBe(401);
  });
});
