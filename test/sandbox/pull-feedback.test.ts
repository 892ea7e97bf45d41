import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGitHubApp } from "../../lib/github/app-client";
import { fetchItemSlices, sliceKey } from "../../lib/github/graphql-items";
import { silentLog } from "../../lib/github/log";
import { PULL_REQUEST_PROJECTION_FIELDS, projectionFromGraphql, type GraphqlItemNode } from "../../lib/loops/projection";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api } from "./support/probot";
import { startReceiver } from "./support/receiver";
import { SchemaChecker } from "./support/schema-checker";
import { exampleKeys } from "./support/webhook-examples";

/**
 * What reviewers and CI leave on a pull request, as the simulator serves it: review threads
 * (replies, resolved), GitHub Actions' check runs and suites, commit statuses — in REST with
 * GitHub's shapes, in GraphQL under Atelier's own selection, and as GitHub's webhooks.
 */

const REPO = "demo-org/webapp";
let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let token: string;
let schemas: SchemaChecker;
let pr: { number: number; head: { sha: string } };
let threadRoots: number[];

beforeAll(async () => {
  receiver = await startReceiver();
  sim = await startSimulator({ seed: "demo", webhookUrl: receiver.url });
  token = sim.createInstallationToken({ account: "demo-org" }).token;
  schemas = new SchemaChecker(["status", "combined-commit-status", "check-suite", "pull-request-review-comment"]);
  pr = await sim.openPullRequest({ repo: REPO, head: "feature/feedback", title: "Feedback", login: "octo-writer" });
  threadRoots = sim.review({
    repo: REPO,
    number: pr.number,
    login: "octo-admin",
    event: "REQUEST_CHANGES",
    body: "Two things.",
    comments: [
      { path: "a.txt", line: 1, body: "First." },
      { path: "b.txt", line: 2, body: "Second." },
    ],
  }).comments;
  sim.replyToReviewComment({ repo: REPO, number: pr.number, commentId: threadRoots[0]!, body: "Will do.", login: "octo-writer" });
  sim.resolveReviewThread({ repo: REPO, number: pr.number, commentId: threadRoots[1]!, login: "octo-admin" });
  sim.finishCiCheck({ repo: REPO, number: pr.number, name: "unit tests", conclusion: "failure", title: "1 failed", summary: "a.test.ts failed" });
  sim.commitStatus({ repo: REPO, sha: pr.head.sha, state: "error", context: "ci/legacy", description: "could not start", login: "octo-admin" });
  await sim.waitForWebhooks();
}, 60_000);

afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
  await receiver.close();
});

const conforms = (value: unknown, schema: string) => expect(schemas.check(value, schema), `${schema} contract`).toEqual([]);

describe("a pull request's feedback in the simulator", () => {
  it("REST: statuses, the combined status, check suites and a reply have GitHub's shapes", async () => {
    const statuses = (await (await api(sim, `/repos/${REPO}/commits/${pr.head.sha}/statuses`, { token })).json()) as unknown[];
    expect(statuses).toHaveLength(1);
    conforms(statuses[0], "status");
    const combined = (await (await api(sim, `/repos/${REPO}/commits/feature%2Ffeedback/status`, { token })).json()) as { state: string };
    conforms(combined, "combined-commit-status");
    expect(combined.state).toBe("failure");
    const suites = (await (await api(sim, `/repos/${REPO}/commits/${pr.head.sha}/check-suites`, { token })).json()) as { total_count: number; check_suites: Record<string, unknown>[] };
    expect(suites.total_count).toBe(1);
    conforms(suites.check_suites[0], "check-suite");
    expect(suites.check_suites[0]).toMatchObject({ status: "completed", conclusion: "failure", app: { slug: "github-actions" } });

    const reply = await api(sim, `/repos/${REPO}/pulls/${pr.number}/comments/${threadRoots[1]}/replies`, { token, method: "POST", body: JSON.stringify({ body: "Done." }) });
    expect(reply.status).toBe(201);
    const body = (await reply.json()) as Record<string, unknown>;
    conforms(body, "pull-request-review-comment");
    expect(body).toMatchObject({ in_reply_to_id: threadRoots[1], path: "b.txt", line: 2 });
    const badState = await api(sim, `/repos/${REPO}/statuses/${pr.head.sha}`, { token: sim.createUserToken({ login: "octo-admin" }).token, method: "POST", body: JSON.stringify({ state: "green" }) });
    expect(badState.status).toBe(422);
  });

  it("GraphQL: Atelier's own pull request selection reads the reviews, the threads and the head's checks", async () => {
    const res = await api(sim, "/graphql", {
      token,
      method: "POST",
      body: JSON.stringify({ query: `{ repository(owner: "demo-org", name: "webapp") { pullRequest(number: ${pr.number}) { ${PULL_REQUEST_PROJECTION_FIELDS} } } }` }),
    });
    const { data, errors } = (await res.json()) as { data: { repository: { pullRequest: GraphqlItemNode } }; errors?: unknown };
    expect(errors).toBeUndefined();
    const projection = projectionFromGraphql(data.repository.pullRequest, "pull_request", sim.app.slug);
    expect(projection.reviews).toEqual([{ author: "octo-admin", state: "CHANGES_REQUESTED", body: "Two things." }]);
    expect(projection.reviewThreads).toEqual([
      { path: "a.txt", line: 1, resolved: false, outdated: false, comments: [{ author: "octo-admin", body: "First." }, { author: "octo-writer", body: "Will do." }] },
      { path: "b.txt", line: 2, resolved: true, outdated: false, comments: [{ author: "octo-admin", body: "Second." }, { author: expect.any(String), body: "Done." }] },
    ]);
    expect(projection.checks).toEqual([
      { name: "ci/legacy", conclusion: "error", title: "could not start", summary: null },
      { name: "unit tests", conclusion: "failure", title: "1 failed", summary: "a.test.ts failed" },
    ]);
  });

  it("webhooks: review threads, check suites, check runs and statuses carry the top-level keys of @octokit/webhooks-examples", () => {
    const expected = ["pull_request_review.submitted", "pull_request_review_comment.created", "pull_request_review_thread.resolved", "check_run.completed", "check_suite.completed", "status."];
    for (const name of expected) {
      const [event = "", action = ""] = name.split(".");
      const delivery = receiver.received.find((r) => r.event === event && r.action === action);
      expect(delivery, name).toBeDefined();
      const keys = Object.keys(JSON.parse(delivery!.body) as Record<string, unknown>);
      for (const key of exampleKeys(event, action)) expect(keys, `${name} has ${key}`).toContain(key);
    }
    const suite = JSON.parse(receiver.received.find((r) => r.event === "check_suite" && r.action === "completed")!.body) as { check_suite: { head_sha: string; pull_requests: { number: number }[]; app: { slug: string } } };
    expect(suite.check_suite).toMatchObject({ head_sha: pr.head.sha, pull_requests: [{ number: pr.number }], app: { slug: "github-actions" } });
    const status = JSON.parse(receiver.received.find((r) => r.event === "status")!.body) as Record<string, unknown>;
    expect(status).toMatchObject({ sha: pr.head.sha, state: "error", context: "ci/legacy" });
    expect(status).not.toHaveProperty("action");
  });

  it("an installation without statuses: read is refused the commit's status alone: its pull requests are read with the rest", async () => {
    sim.createOrg({ login: "old-org" });
    await sim.createRepo({ owner: "old-org", name: "site", files: { "README.md": "# site\n" } });
    // installed before the App asked for statuses
    const installation = sim.createInstallation({ account: "old-org", permissions: { metadata: "read", contents: "write", issues: "write", pull_requests: "write", checks: "write" } });
    const old = await sim.openPullRequest({ repo: "old-org/site", head: "feature/x", title: "X", login: "octo-admin" });
    sim.finishCiCheck({ repo: "old-org/site", number: old.number, name: "build", conclusion: "failure", title: "Broken", summary: "make: *** [all] Error 2" });
    sim.commitStatus({ repo: "old-org/site", sha: old.head.sha, state: "failure", context: "ci/legacy", login: "octo-admin" });

    const app = createGitHubApp(sim.appSettings(), { log: silentLog });
    const slices = await fetchItemSlices(app, installation.id, [{ repo: "old-org/site", number: old.number, kind: "pull_request" }]);
    const slice = slices.get(sliceKey("old-org/site", old.number))!;
    expect(slice).not.toHaveProperty("error");
    const projection = projectionFromGraphql((slice as { node: GraphqlItemNode }).node, "pull_request", sim.app.slug);
    expect(projection).toMatchObject({ number: old.number, title: "X" });
    expect(projection.checks).toEqual([{ name: "build", conclusion: "failure", title: "Broken", summary: "make: *** [all] Error 2" }]);
  });
});
