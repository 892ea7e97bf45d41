import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { api } from "./support/probot";

/** The simulator's convertPullRequestToDraft and markPullRequestReadyForReview, as GitHub has them. */

let sim: Simulator;
let nodeId: string;
let number: number;

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  const pr = await sim.openPullRequest({ repo: "demo-org/webapp", head: "feature/draft", title: "A PR" });
  nodeId = pr.node_id;
  number = pr.number;
});
afterAll(async () => {
  expect(sim.unknownRequests).toEqual([]);
  await sim.close();
});

const TO_DRAFT = `mutation($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id, clientMutationId: "m1" }) { clientMutationId pullRequest { number isDraft } } }`;
const READY = `mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`;

async function graphql(query: string, token: string, id = nodeId) {
  const res = await api(sim, "/graphql", { token, method: "POST", body: JSON.stringify({ query, variables: { id } }) });
  return (await res.json()) as { data?: Record<string, { pullRequest?: { isDraft: boolean } } | null>; errors?: { type?: string; message: string }[] };
}

describe("draft mutations", () => {
  it("an installation with pull_requests: write turns a pull request into a draft and back, with GitHub's webhooks", async () => {
    const token = sim.createInstallationToken({ account: "demo-org" }).token;
    const draft = await graphql(TO_DRAFT, token);
    expect(draft.errors).toBeUndefined();
    expect(draft.data?.convertPullRequestToDraft).toMatchObject({ clientMutationId: "m1", pullRequest: { isDraft: true } });
    expect((await graphql(READY, token)).data?.markPullRequestReadyForReview?.pullRequest?.isDraft).toBe(false);
    const actions = sim.deliveries({ event: "pull_request" }).map((d) => (d.payload as { action?: string }).action);
    expect(actions).toEqual(expect.arrayContaining(["converted_to_draft", "ready_for_review"]));
  });

  it("refuses a token that may only read pull requests, a reader, and an id that names nothing", async () => {
    const readOnly = sim.createInstallationToken({ account: "demo-org", permissions: { pull_requests: "read", metadata: "read" } }).token;
    expect((await graphql(TO_DRAFT, readOnly)).errors?.[0]).toMatchObject({ type: "FORBIDDEN" });
    const reader = sim.createUserToken({ login: "octo-reader" }).token;
    expect((await graphql(TO_DRAFT, reader)).errors?.[0]).toMatchObject({ type: "FORBIDDEN" });
    const token = sim.createInstallationToken({ account: "demo-org" }).token;
    expect((await graphql(TO_DRAFT, token, "PR_nothing")).errors?.[0]).toMatchObject({ type: "NOT_FOUND" });
    expect(sim.state.findItem(sim.state.repoByFullName("demo-org/webapp"), number)!.pull!.draft).toBe(false);
  });
});
