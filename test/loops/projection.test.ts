import { describe, expect, it } from "vitest";
import { contentHash } from "../../lib/engine/content-hash";
import { BadInputError } from "../../lib/errors";
import { buildItemContext } from "../../lib/loops/item-context";
import {
  projectionFromGraphql,
  projectionFromRest,
  type GraphqlItemNode,
  type RestItem,
} from "../../lib/loops/projection";

const URL_BASE = "https://github.com/acme/api";

function graphqlIssue(over: Partial<GraphqlItemNode> = {}): GraphqlItemNode {
  return {
    number: 12,
    title: "Crash on empty config",
    body: "Steps:\r\n1. run it",
    state: "OPEN",
    url: `${URL_BASE}/issues/12`,
    createdAt: "2026-01-02T03:04:05Z",
    updatedAt: "2026-01-03T03:04:05Z",
    closedAt: null,
    author: { __typename: "User", login: "octocat" },
    labels: { nodes: [{ name: "ready-for-agent" }, { name: "bug" }] },
    ...over,
  };
}

function restIssue(over: Partial<RestItem> = {}): RestItem {
  return {
    number: 12,
    title: "Crash on empty config",
    body: "Steps:\r\n1. run it",
    state: "open",
    html_url: `${URL_BASE}/issues/12`,
    created_at: "2026-01-02T03:04:05Z",
    updated_at: "2026-01-03T03:04:05Z",
    closed_at: null,
    user: { login: "octocat", type: "User" },
    labels: [{ name: "bug" }, { name: "ready-for-agent" }],
    ...over,
  };
}

function graphqlPull(over: Partial<GraphqlItemNode> = {}): GraphqlItemNode {
  return {
    number: 40,
    title: "Fix the crash",
    body: "Closes #12",
    state: "OPEN",
    url: `${URL_BASE}/pull/40`,
    createdAt: "2026-01-04T00:00:00Z",
    updatedAt: "2026-01-05T00:00:00Z",
    closedAt: null,
    mergedAt: null,
    merged: false,
    isDraft: false,
    mergeable: "MERGEABLE",
    headRefName: "atelier/start-dev/12",
    headRefOid: "a".repeat(40),
    baseRefName: "main",
    author: { __typename: "Bot", login: "atelier-app" },
    labels: { nodes: [{ name: "in-review" }] },
    ...over,
  };
}

function restPull(over: Partial<RestItem> = {}): RestItem {
  return {
    number: 40,
    title: "Fix the crash",
    body: "Closes #12",
    state: "open",
    html_url: `${URL_BASE}/pull/40`,
    created_at: "2026-01-04T00:00:00Z",
    updated_at: "2026-01-05T00:00:00Z",
    closed_at: null,
    merged_at: null,
    merged: false,
    draft: false,
    mergeable: true,
    head: { ref: "atelier/start-dev/12", sha: "a".repeat(40) },
    base: { ref: "main" },
    user: { login: "atelier-app[bot]", type: "Bot" },
    labels: [{ name: "in-review" }],
    ...over,
  };
}

describe("projectionFromGraphql", () => {
  it("projects an issue (golden)", () => {
    expect(projectionFromGraphql(graphqlIssue(), "issue")).toEqual({
      kind: "issue",
      number: 12,
      title: "Crash on empty config",
      body: "Steps:\r\n1. run it",
      state: "open",
      author: "octocat",
      labels: ["bug", "ready-for-agent"],
      draft: false,
      headRefName: null,
      headRefOid: null,
      baseRefName: null,
      mergeable: null,
      merged: false,
      url: `${URL_BASE}/issues/12`,
      createdAt: "2026-01-02T03:04:05Z",
      updatedAt: "2026-01-03T03:04:05Z",
      closedAt: null,
      mergedAt: null,
    });
  });

  it("projects a pull request (golden), naming a bot as REST does", () => {
    expect(projectionFromGraphql(graphqlPull(), "pull_request")).toEqual({
      kind: "pull_request",
      number: 40,
      title: "Fix the crash",
      body: "Closes #12",
      state: "open",
      author: "atelier-app[bot]",
      labels: ["in-review"],
      draft: false,
      headRefName: "atelier/start-dev/12",
      headRefOid: "a".repeat(40),
      baseRefName: "main",
      mergeable: true,
      merged: false,
      url: `${URL_BASE}/pull/40`,
      createdAt: "2026-01-04T00:00:00Z",
      updatedAt: "2026-01-05T00:00:00Z",
      closedAt: null,
      mergedAt: null,
    });
  });

  it.each([
    ["MERGEABLE", true],
    ["CONFLICTING", false],
    ["UNKNOWN", null],
    [null, null],
  ] as const)("maps mergeable %s to %s", (value, expected) => {
    expect(projectionFromGraphql(graphqlPull({ mergeable: value }), "pull_request").mergeable).toBe(expected);
  });

  it("sorts labels by code unit and drops duplicates and nulls", () => {
    const p = projectionFromGraphql(
      graphqlIssue({ labels: { nodes: [{ name: "b" }, null, { name: "B" }, { name: "a" }, { name: "b" }, { name: "Ä" }] } }),
      "issue",
    );
    expect(p.labels).toEqual(["B", "a", "b", "Ä"]);
  });

  it("gives an empty body, a null author and no labels when GitHub has none", () => {
    const p = projectionFromGraphql(graphqlIssue({ body: "", author: null, labels: null }), "issue");
    expect(p).toMatchObject({ body: "", author: null, labels: [] });
  });
});

describe("projectionFromRest", () => {
  it("refuses an issue-shaped pull request, which lacks head, base and mergeability", () => {
    const issueShaped = restIssue({ number: 40, pull_request: { url: "x", merged_at: null } });
    try {
      projectionFromRest(issueShaped);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BadInputError);
      expect((err as BadInputError).token).toBe("projection_needs_pull_request");
      expect((err as BadInputError).message).toContain("GET /repos/{owner}/{repo}/pulls/40");
    }
  });

  it("reads labels given as plain strings too", () => {
    expect(projectionFromRest(restIssue({ labels: ["z", "a"] })).labels).toEqual(["a", "z"]);
  });

  it("treats a pull request with merged_at as merged even when `merged` is absent (pulls listing)", () => {
    const p = projectionFromRest(restPull({ state: "closed", merged: undefined, merged_at: "2026-01-06T00:00:00Z" }));
    expect(p).toMatchObject({ state: "merged", merged: true, mergedAt: "2026-01-06T00:00:00Z" });
  });
});

describe("GraphQL and REST give the same projection and content hash for the same GitHub state", () => {
  const cases: [string, GraphqlItemNode, "issue" | "pull_request", RestItem][] = [
    ["an open issue", graphqlIssue(), "issue", restIssue()],
    [
      "a closed issue with no body",
      graphqlIssue({ state: "CLOSED", body: "", closedAt: "2026-01-09T00:00:00Z" }),
      "issue",
      restIssue({ state: "closed", body: null, closed_at: "2026-01-09T00:00:00Z" }),
    ],
    [
      "an issue by a deleted user, without labels",
      graphqlIssue({ author: null, labels: { nodes: [] } }),
      "issue",
      restIssue({ user: null, labels: [] }),
    ],
    ["an open mergeable pull request by a bot", graphqlPull(), "pull_request", restPull()],
    [
      "a draft pull request whose mergeability is being computed",
      graphqlPull({ isDraft: true, mergeable: "UNKNOWN" }),
      "pull_request",
      restPull({ draft: true, mergeable: null }),
    ],
    [
      "a conflicting pull request by a user",
      graphqlPull({ mergeable: "CONFLICTING", author: { __typename: "User", login: "mona" } }),
      "pull_request",
      restPull({ mergeable: false, user: { login: "mona", type: "User" } }),
    ],
    [
      "a merged pull request",
      graphqlPull({ state: "MERGED", merged: true, mergedAt: "2026-01-06T00:00:00Z", closedAt: "2026-01-06T00:00:00Z" }),
      "pull_request",
      restPull({ state: "closed", merged: true, merged_at: "2026-01-06T00:00:00Z", closed_at: "2026-01-06T00:00:00Z" }),
    ],
    [
      "a closed, unmerged pull request",
      graphqlPull({ state: "CLOSED", closedAt: "2026-01-06T00:00:00Z" }),
      "pull_request",
      restPull({ state: "closed", closed_at: "2026-01-06T00:00:00Z" }),
    ],
  ];

  it.each(cases)("%s", (_name, node, kind, rest) => {
    const fromGraphql = projectionFromGraphql(node, kind);
    const fromRest = projectionFromRest(rest);
    expect(fromRest).toEqual(fromGraphql);
    expect(contentHash(fromRest)).toBe(contentHash(fromGraphql));
  });

  it("the hash ignores timestamps but sees every content change", () => {
    const base = projectionFromGraphql(graphqlPull(), "pull_request");
    const touched = projectionFromGraphql(graphqlPull({ updatedAt: "2027-01-01T00:00:00Z" }), "pull_request");
    expect(contentHash(touched)).toBe(contentHash(base));
    const changes: Partial<GraphqlItemNode>[] = [
      { title: "Fix the crash!" },
      { body: "Closes #13" },
      { labels: { nodes: [{ name: "in-review" }, { name: "x" }] } },
      { headRefOid: "b".repeat(40) },
      { mergeable: "CONFLICTING" },
      { isDraft: true },
      { state: "CLOSED" },
    ];
    for (const change of changes) {
      expect(contentHash(projectionFromGraphql(graphqlPull(change), "pull_request"))).not.toBe(contentHash(base));
    }
  });
});

const run = (name: string, conclusion: string | null, extra: { title?: string; summary?: string; status?: string } = {}) => ({
  name,
  status: extra.status ?? (conclusion ? "COMPLETED" : "IN_PROGRESS"),
  conclusion,
  title: extra.title ?? null,
  summary: extra.summary ?? null,
});

const commit = (suites: { slug: string; runs: ReturnType<typeof run>[] }[], contexts: { context: string; state: string; description?: string }[] | null = null) => ({
  nodes: [
    {
      commit: {
        checkSuites: { nodes: suites.map((s) => ({ app: { slug: s.slug }, checkRuns: { nodes: s.runs } })) },
        status: contexts ? { contexts } : null,
      },
    },
  ],
});

describe("a pull request's feedback in the projection", () => {
  it("hashes a pull request with no reviews, threads or checks as before they were read", () => {
    const quiet = graphqlPull({ reviews: { nodes: [] }, reviewThreads: { nodes: [] }, commits: commit([]) });
    const before = graphqlPull();
    expect(contentHash(projectionFromGraphql(quiet, "pull_request", "atelier"))).toBe(contentHash(projectionFromGraphql(before, "pull_request")));
    expect(projectionFromGraphql(quiet, "pull_request")).not.toHaveProperty("checks");
  });

  it("keeps the reviews (not a pending draft) and the threads with each comment, bots named as REST names them", () => {
    const p = projectionFromGraphql(
      graphqlPull({
        reviews: {
          nodes: [
            { author: { __typename: "User", login: "reviewer" }, state: "CHANGES_REQUESTED", body: "Two things." },
            { author: { __typename: "User", login: "reviewer" }, state: "PENDING", body: "draft" },
            null,
          ],
        },
        reviewThreads: {
          nodes: [
            { isResolved: false, isOutdated: false, path: "footer.html", line: 3, comments: { nodes: [{ author: { __typename: "User", login: "reviewer" }, body: "Wrong year." }, { author: { __typename: "Bot", login: "atelier" }, body: "Fixed." }] } },
            { isResolved: true, isOutdated: true, path: "a.css", line: null, comments: { nodes: [{ author: null, body: "gone" }] } },
          ],
        },
      }),
      "pull_request",
    );
    expect(p.reviews).toEqual([{ author: "reviewer", state: "CHANGES_REQUESTED", body: "Two things." }]);
    expect(p.reviewThreads).toEqual([
      { path: "footer.html", line: 3, resolved: false, outdated: false, comments: [{ author: "reviewer", body: "Wrong year." }, { author: "atelier[bot]", body: "Fixed." }] },
      { path: "a.css", line: null, resolved: true, outdated: true, comments: [{ author: null, body: "gone" }] },
    ]);
  });

  it("keeps the finished checks of other Apps and the final commit statuses, by name; the App's own check runs are not the code's", () => {
    const node = graphqlPull({
      commits: commit(
        [
          { slug: "atelier", runs: [run("atelier / start-dev", "failure", { title: "The Run failed" })] },
          { slug: "github-actions", runs: [run("unit tests", "failure", { title: "2 failed", summary: "a.test.ts" }), run("lint", "success"), run("e2e", null)] },
        ],
        [
          { context: "ci/legacy", state: "ERROR", description: "could not start" },
          { context: "deploy/preview", state: "PENDING" },
        ],
      ),
    });
    const p = projectionFromGraphql(node, "pull_request", "atelier");
    expect(p.checks).toEqual([
      { name: "ci/legacy", conclusion: "error", title: "could not start", summary: null },
      { name: "lint", conclusion: "success", title: null, summary: null },
      { name: "unit tests", conclusion: "failure", title: "2 failed", summary: "a.test.ts" },
    ]);
    expect(buildItemContext(p).checks.map((c) => [c.name, c.failed])).toEqual([
      ["ci/legacy", true],
      ["lint", false],
      ["unit tests", true],
    ]);
    // the App's own check run changing (its Run's status) does not change the pull request's content
    const ownMoved = graphqlPull({ commits: commit([{ slug: "atelier", runs: [run("atelier / start-dev", "success")] }]) });
    const ownFailed = graphqlPull({ commits: commit([{ slug: "atelier", runs: [run("atelier / start-dev", "failure")] }]) });
    expect(contentHash(projectionFromGraphql(ownMoved, "pull_request", "atelier"))).toBe(contentHash(projectionFromGraphql(ownFailed, "pull_request", "atelier")));
  });

  it("gives an issue, and a pull request read without them, empty lists in the context", () => {
    const context = buildItemContext(projectionFromGraphql(graphqlPull(), "pull_request"));
    expect(context).toMatchObject({ reviews: [], review_threads: [], checks: [] });
  });
});
