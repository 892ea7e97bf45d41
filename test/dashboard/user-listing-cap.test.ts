import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listInstallationRepositories } from "../../lib/github/github-user-api";
import { startSimulator, type Simulator } from "../../lib/sandbox";

/**
 * What a signed-in person may see is read from GitHub at most ten pages of 100 at a time: an
 * installation with more repositories than that is cut at 1,000, never read in an unbounded
 * loop of requests on a page render.
 */

let sim: Simulator;
const OWNER = "many-repos";

beforeAll(async () => {
  sim = await startSimulator({ seed: "demo" });
  sim.createUser({ login: OWNER });
  const owner = sim.state.findAccount(OWNER)!;
  // the listing reads no repository's content: the state alone, without a git repository each
  for (let i = 1; i <= 1_030; i++) sim.state.addRepo(owner, `repo-${i}`, "/nonexistent");
  sim.createInstallation({ account: OWNER });
});
afterAll(() => sim.close());

describe("the signed-in person's repositories", () => {
  it("stop at ten pages of 100 of an installation's 1,030", async () => {
    const installationId = sim.state.installationForRepo(sim.state.repoByFullName(`${OWNER}/repo-1`))!.id;
    const { token } = sim.createUserToken({ login: OWNER });
    sim.resetCounters();
    const repositories = await listInstallationRepositories(token, installationId, sim.url);
    expect(repositories).toHaveLength(1_000);
    expect(new Set(repositories.map((r) => r.fullName)).size).toBe(1_000);
    expect(sim.counters.byRoute["GET /user/installations/{installation_id}/repositories"]).toBe(10);
  }, 60_000);
});
