import { describe, expect, it } from "vitest";
import { contentHash } from "../../lib/engine/content-hash";
import { buildItemContext } from "../../lib/loops/item-context";
import { projectionFromGraphql, type GraphqlItemNode } from "../../lib/loops/projection";

/** A pull request node as GitHub answers the Item selection, with its feedback. */
function pull(over: Partial<GraphqlItemNode> = {}): GraphqlItemNode {
  return {
    number: 40,
    title: "Fix the crash",
    body: "Closes #12",
    state: "OPEN",
    url: "https://github.com/acme/api/pull/40",
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
    author: { __typename: "Bot", login: "atelier" },
    labels: { nodes: [] },
    ...over,
  };
}

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
    const quiet = pull({ reviews: { nodes: [] }, reviewThreads: { nodes: [] }, commits: commit([]) });
    const before = pull();
    expect(contentHash(projectionFromGraphql(quiet, "pull_request", "atelier"))).toBe(contentHash(projectionFromGraphql(before, "pull_request")));
    expect(projectionFromGraphql(quiet, "pull_request")).not.toHaveProperty("checks");
  });

  it("keeps the reviews (not a pending draft) and the threads with each comment, bots named as REST names them", () => {
    const p = projectionFromGraphql(
      pull({
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
    const node = pull({
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
    const ownMoved = pull({ commits: commit([{ slug: "atelier", runs: [run("atelier / start-dev", "success")] }]) });
    const ownFailed = pull({ commits: commit([{ slug: "atelier", runs: [run("atelier / start-dev", "failure")] }]) });
    expect(contentHash(projectionFromGraphql(ownMoved, "pull_request", "atelier"))).toBe(contentHash(projectionFromGraphql(ownFailed, "pull_request", "atelier")));
  });

  it("gives an issue, and a pull request read without them, empty lists in the context", () => {
    const context = buildItemContext(projectionFromGraphql(pull(), "pull_request"));
    expect(context).toMatchObject({ reviews: [], review_threads: [], checks: [] });
  });
});
