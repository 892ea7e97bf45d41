import { afterAll, beforeAll, expect, it } from "vitest";
import { createGitHubApp } from "../../lib/github/app-client";
import { silentLog } from "../../lib/github/log";
import { checkRunName } from "../../lib/mirror/check-run-view";
import { GitHubCallError } from "../../lib/mirror/github-client";
import { mirrorRetryDelayMs } from "../../lib/mirror/mirror-retry";
import { syncRunMirror, type MirrorDeps } from "../../lib/mirror/sync-run";
import { approve, parkForApproval } from "../../lib/store/runs/approvals";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb } from "../support/db";
import { latestCheckRun, loopEvent, openPullRequest, PUBLIC_URL, startMirrorWorld, type MirrorWorld } from "./support";

const db = testDb();
let world: MirrorWorld;
const LOOP = "review";

beforeAll(async () => {
  world = await startMirrorWorld(db);
});
afterAll(async () => {
  world.sim.setSecondaryLimit({ perMinute: null });
  await world?.close();
  await db.close();
});

/** The mirror of one worker whose clock the test moves, as a minute passing would. */
function movedMirror(): { deps: MirrorDeps; advance(ms: number): void } {
  let offset = 0;
  const app = createGitHubApp(world.sim.appSettings(), { log: silentLog, clock: { now: () => Date.now() + offset } });
  return {
    deps: { db, github: async (id) => app.installationOctokit(id), publicUrl: PUBLIC_URL },
    advance(ms) {
      offset += ms;
      world.sim.advanceClock({ ms });
    },
  };
}

async function claim(number: number, hash: string): Promise<string> {
  const result = await recordAndClaim(db, loopEvent(world.repo, number, hash, LOOP, true));
  if (result.tag !== "Claimed") throw new Error(`expected a Run, got ${result.tag}`);
  return result.runId;
}

for (const limit of [
  { name: "403 without retry-after", input: { retryAfter: null, limitStatus: 403 as const }, waitAtLeastMs: 60_000 },
  { name: "429 without retry-after", input: { retryAfter: null, limitStatus: 429 as const }, waitAtLeastMs: 60_000 },
  { name: "403 with retry-after", input: { retryAfter: 20, limitStatus: 403 as const }, waitAtLeastMs: 20_000 },
]) {
  it(`a check run refused by a burst's secondary limit (${limit.name}) is retried once the wait passed, and ends up current`, async () => {
    const mirror = movedMirror();
    const pr = await openPullRequest(db, world, `burst-${limit.input.limitStatus}-${limit.input.retryAfter ?? "none"}`);
    const runId = await claim(pr.number, "h1");
    await syncRunMirror(mirror.deps, runId); // the check run exists: queued
    await parkForApproval(db, runId);
    world.sim.setSecondaryLimit({ perMinute: 2, ...limit.input });
    try {
      await syncRunMirror(mirror.deps, runId); // the two writes of this minute: the check run action_required, the comment
      await approve(db, runId, "octo-writer");
      const refused = await syncRunMirror(mirror.deps, runId).catch((e: unknown) => e);
      // a rate limit, not a refusal: the mirror tries again after GitHub's wait
      expect(refused).toBeInstanceOf(GitHubCallError);
      expect(refused).toMatchObject({ retryable: true });
      expect(mirrorRetryDelayMs(1, refused)).toBeGreaterThanOrEqual(limit.waitAtLeastMs);
      expect(latestCheckRun(world.sim, pr.sha, checkRunName(LOOP))).toMatchObject({ status: "completed", conclusion: "action_required" });

      mirror.advance(125_000); // past the wait Atelier took, and past the simulator's minute
      await syncRunMirror(mirror.deps, runId);
      expect(latestCheckRun(world.sim, pr.sha, checkRunName(LOOP))).toMatchObject({ status: "queued", conclusion: null });
    } finally {
      world.sim.setSecondaryLimit({ perMinute: null });
    }
  });
}

it("GitHub refuses a check run whose output has no title (422); Atelier's check runs always carry one", async () => {
  const pr = await openPullRequest(db, world, "untitled-output");
  const token = world.sim.createInstallationToken({ installationId: world.installationId }).token;
  const response = await fetch(`${world.sim.url}/repos/${world.repo}/check-runs`, {
    method: "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "untitled", head_sha: pr.sha, output: { summary: "no title" } }),
  });
  expect(response.status).toBe(422);
  expect(await response.json()).toMatchObject({ errors: [{ field: "output.title", code: "missing_field" }] });

  const runId = await claim(pr.number, "h1");
  await expect(syncRunMirror(world.deps, runId)).resolves.toMatchObject({ tag: "Synced", check: "written" });
});
