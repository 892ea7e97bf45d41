import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listChangedItems, MAX_LISTING_PAGES } from "../../lib/github/issues-listing";
import { startSimulator, type Simulator } from "../../lib/sandbox";
import { appFromSettings } from "../runner/support/sim-world";

/**
 * The change listing reads at most ten pages of 100 per poll: a repository with more changed
 * Items than that is read in turns (the poll goes on from the last `updated_at` it saw), never
 * in one unbounded burst of requests.
 */

let sim: Simulator;
const REPO = "demo-org/many";

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  await sim.createRepo({ owner: "demo-org", name: "many", files: { "README.md": "# many\n" } });
  sim.addRepository({ repo: REPO });
  for (let i = 1; i <= MAX_LISTING_PAGES * 100 + 30; i++) sim.createIssue({ repo: REPO, title: `issue ${i}` });
});
afterAll(() => sim.close());

describe("the change listing", () => {
  it("stops at ten pages of 100 and says it was cut; the oldest changes come first", async () => {
    const app = appFromSettings(sim.appSettings());
    const installationId = sim.state.installationForRepo(sim.state.repoByFullName(REPO))!.id;
    const octokit = app.installationOctokit(installationId);
    sim.resetCounters();
    const listing = await listChangedItems(octokit, REPO, { since: null, etag: null });
    if (!listing.modified) throw new Error("expected a listing");
    expect(listing.items).toHaveLength(1_000);
    expect(listing.truncated).toBe(true);
    expect(listing.items[0]!.title).toBe("issue 1");
    expect(sim.counters.byRoute["GET /repos/{owner}/{repo}/issues"]).toBe(MAX_LISTING_PAGES);
  }, 60_000);
});
