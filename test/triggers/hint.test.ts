import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHintWorker } from "../../jobs/processors/hint";
import { createPollWorker } from "../../jobs/processors/poll";
import { bullConnection, hintJobId, QUEUE_NAMES } from "../../jobs/queues";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { eventually, installRepository, runsOf, startFixture, startWebhookEndpoint, type Fixture } from "../github/support/fixture";

let fx: Fixture;
let endpoint: { close(): Promise<void> };
let worker: Worker;

beforeAll(async () => {
  fx = await startFixture();
  endpoint = await startWebhookEndpoint(fx);
  worker = createHintWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
  await worker.waitUntilReady();
});
afterAll(async () => {
  await worker.close();
  await endpoint.close();
  await fx.close();
});

const LABEL = "ready-for-agent";

describe("Hints", () => {
  it("opens one Run from the webhook before any poll, and the poll after it opens nothing more", async () => {
    const { fullName } = await installRepository(fx, { owner: "hint-a", name: "app" });
    await pollRepository(fx.deps, fullName); // creates the label
    const issue = fx.sim.createIssue({ repo: fullName, title: "Fix the login", body: "It says Sing in." });
    fx.sim.addLabels({ repo: fullName, number: issue.number, labels: [LABEL] });
    await fx.sim.waitForWebhooks();
    const runs = await eventually(async () => {
      const r = await runsOf(fx.db, fullName);
      return r.length ? r : undefined;
    });
    expect(runs).toEqual([{ id: expect.any(String), loop: "start-dev", number: issue.number, state: "Pending", cancel_reason: null }]);
    const polled = await pollRepository(fx.deps, fullName);
    expect(polled).toMatchObject({ status: "polled", opened: [] });
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);
  });

  it("merges duplicate Hints while they are pending", async () => {
    await worker.pause();
    const hint = { installationId: 1, repo: "hint-dup/app", number: 7 };
    for (let i = 0; i < 10; i++) await fx.workQueue.hint(hint);
    const queue = fx.workQueue.queue(QUEUE_NAMES.hints);
    expect(await queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
    expect(await queue.getJob(hintJobId(hint))).toBeTruthy();
    worker.resume();
    await eventually(async () => ((await queue.getJobCounts("waiting", "active")).waiting === 0 ? true : undefined));
  });

  it("catches a lost webhook at the next poll", async () => {
    const { fullName } = await installRepository(fx, { owner: "hint-b", name: "app" });
    await pollRepository(fx.deps, fullName);
    fx.sim.dropNextWebhook({ count: 2 }); // issues.opened and issues.labeled
    fx.sim.createIssue({ repo: fullName, title: "Lost", labels: [LABEL] });
    await fx.sim.waitForWebhooks();
    expect(fx.sim.deliveries({ event: "issues" }).filter((d) => d.status === "dropped").map((d) => d.action)).toEqual(["opened", "labeled"]);
    await new Promise((r) => setTimeout(r, 100));
    expect(await runsOf(fx.db, fullName)).toEqual([]);
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ opened: [expect.any(String)] });
    expect(await runsOf(fx.db, fullName)).toHaveLength(1);
  });

  it("the label webhook's poll creates again a declared label someone deleted", async () => {
    const { fullName } = await installRepository(fx, { owner: "hint-label", name: "app" });
    expect(await pollRepository(fx.deps, fullName)).toMatchObject({ labelsCreated: [LABEL] });
    await pollRepository(fx.deps, fullName); // the labels are known complete: no preflight
    const poller = createPollWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
    try {
      await poller.waitUntilReady();
      fx.sim.deleteLabel({ repo: fullName, name: LABEL });
      await fx.sim.waitForWebhooks();
      const repo = fx.sim.state.repoByFullName(fullName);
      await eventually(async () => [...repo.labels.values()].some((l) => l.name === LABEL) || undefined);
    } finally {
      await poller.close();
    }
  });

  it("the App's own comment leaves the repository's poll interval; a person's brings it back to the shortest", async () => {
    const { fullName, installationId } = await installRepository(fx, { owner: "hint-own", name: "app" });
    const issue = fx.sim.createIssue({ repo: fullName, title: "Backed off" });
    await pollRepository(fx.deps, fullName);
    const queue = fx.workQueue.queue(QUEUE_NAMES.hints);
    const drained = () => eventually(async () => (Object.values(await queue.getJobCounts("waiting", "active", "delayed")).every((n) => n === 0) ? true : undefined));
    await fx.sim.waitForWebhooks();
    await drained();
    const interval = async () => (await fx.db.pool.query<{ poll_interval_s: number | null }>(`SELECT poll_interval_s FROM repositories WHERE full_name = $1`, [fullName])).rows[0]!.poll_interval_s;
    await fx.db.pool.query(`UPDATE repositories SET poll_interval_s = 240 WHERE full_name = $1`, [fullName]);

    const [owner, name] = fullName.split("/");
    await fx.github.installationOctokit(installationId).request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { owner: owner!, repo: name!, issue_number: issue.number, body: "Atelier's tracking comment" });
    await fx.sim.waitForWebhooks();
    await drained();
    expect(fx.sim.deliveries({ event: "issue_comment" }).at(-1)?.status).not.toBe("dropped");
    expect(await interval()).toBe(240);

    fx.sim.comment({ repo: fullName, number: issue.number, body: "A person's comment" });
    await fx.sim.waitForWebhooks();
    await eventually(async () => ((await interval()) === null ? true : undefined));
  });
});
