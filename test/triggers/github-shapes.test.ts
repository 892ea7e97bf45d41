import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHintWorker } from "../../jobs/processors/hint";
import { bullConnection } from "../../jobs/queues";
import { listChangedItems } from "../../lib/github/issues-listing";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { eventually, installRepository, runsOf, startFixture, startWebhookEndpoint, type Fixture } from "../github/support/fixture";

let fx: Fixture;
let endpoint: { close(): Promise<void> };
let workers: Worker[];

beforeAll(async () => {
  fx = await startFixture();
  endpoint = await startWebhookEndpoint(fx);
  // two hint workers, as two worker processes would run them
  workers = [createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix }), createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix })];
  await Promise.all(workers.map((w) => w.waitUntilReady()));
});
afterAll(async () => {
  fx.sim.setWebhookConcurrency({ count: 1 });
  await Promise.all(workers.map((w) => w.close()));
  await endpoint.close();
  await fx.close();
});

const LABEL = "ready-for-agent";
const OPEN = ["Pending", "Waiting", "Queued", "Running"];

describe("GitHub's shapes Atelier must take as they come", () => {
  it("follows pagination Links that name the repository by its id", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "link-by-id", name: "app" });
    for (let i = 0; i < 5; i++) fx.sim.createIssue({ repo: fullName, title: `Issue ${i}` });
    const octokit = fx.github.installationOctokit(installationId);
    const first = await octokit.request("GET /repos/{owner}/{repo}/issues", { owner: "link-by-id", repo: "app", per_page: 2, state: "all" });
    const id = fx.sim.state.repoByFullName(fullName).id;
    expect(String(first.headers.link)).toContain(`/repositories/${id}/issues?`);
    const listing = await listChangedItems(octokit, fullName, { since: null, etag: null });
    expect(listing).toMatchObject({ modified: true, truncated: false });
    if (listing.modified) expect(listing.items).toHaveLength(5);
    // and through Atelier's listing of 100 a page, over more than one page
    for (let i = 5; i < 130; i++) fx.sim.createIssue({ repo: fullName, title: `Issue ${i}` });
    const long = await listChangedItems(octokit, fullName, { since: null, etag: null });
    if (long.modified) expect(new Set(long.items.map((i) => i.number)).size).toBe(130);
    expect(long.modified).toBe(true);
  });

  it("takes overlapping webhook deliveries of related events: never two open Runs of the Loop on the Item", async () => {
    const { fullName } = await installRepository(fx, { owner: "overlap", name: "app" });
    await pollRepository(fx.deps, fullName); // the label exists
    fx.sim.setWebhookConcurrency({ count: 4 });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Overlap", body: "first", labels: [LABEL] });
    fx.sim.editIssue({ repo: fullName, number: issue.number, body: "second" });
    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: ["extra"] });
    await fx.sim.waitForWebhooks();
    expect(fx.sim.setWebhookConcurrency({ count: 4 }).maxInFlight).toBeGreaterThanOrEqual(2);
    expect(fx.sim.deliveries({ event: "issues" }).filter((d) => d.payload.issue && (d.payload.issue as { number: number }).number === issue.number).every((d) => d.status === "delivered")).toBe(true);

    const runs = await eventually(async () => {
      const r = await runsOf(fx.db, fullName);
      return r.some((run) => OPEN.includes(run.state)) ? r : undefined;
    }, 30_000);
    expect(runs.filter((r) => OPEN.includes(r.state))).toHaveLength(1);
    // the poll after them sees the same content: nothing more
    const polled = await pollRepository(fx.deps, fullName);
    expect(polled).toMatchObject({ status: "polled" });
    const after = await runsOf(fx.db, fullName);
    expect(after.filter((r) => OPEN.includes(r.state))).toHaveLength(1);
  });
});
