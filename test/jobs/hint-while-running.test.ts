import { Worker, type Job } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { bullConnection, bullPrefix, BullWorkQueue, QUEUE_NAMES, takeHintSenders } from "../../jobs/queues";
import type { Hint } from "../../lib/work/work-queue";
import { testDb } from "../support/db";
import { uniquePrefix, waitFor } from "../runner/support/runner-fixture";

/**
 * A Hint that arrives while the job of its Item runs is not lost: that job may have read the
 * Item before the change the Hint reports (a comment edited while its first Hint was read), so
 * the Hint waits as a job of its own and the Item is read again. One still waiting absorbs it.
 */

const prefix = uniquePrefix("hint-while-running");
const db = testDb();
const queue = new BullWorkQueue({ connection: bullConnection(), prefix, db, pollIntervalSeconds: 60 });
let worker: Worker<Hint> | null = null;

afterAll(async () => {
  await worker?.close();
  await queue.queue(QUEUE_NAMES.hints).obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await db.pool.end();
});

describe("a Hint for an Item whose job is running", () => {
  it("runs again after it, with its own sender; a second Hint while the first waits is absorbed", async () => {
    const hint: Hint = { installationId: 1, repo: "acme/site", number: 7, sender: "writer" };
    await queue.hint(hint);
    await queue.hint({ ...hint, sender: "other" }); // still waiting: absorbed
    const ran: { id: string; senders: string[] }[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    worker = new Worker<Hint>(
      QUEUE_NAMES.hints,
      async (job: Job<Hint>) => {
        ran.push({ id: job.id!, senders: (await takeHintSenders(await worker!.getBackend().client, prefix, job.id!)).sort() });
        if (ran.length === 1) await held;
      },
      { connection: bullConnection(), ...bullPrefix(prefix) },
    );
    await waitFor("the first job running", async () => ran.length === 1 || null);
    await queue.hint({ ...hint, sender: "stranger" }); // the first job may have read the Item already
    release();
    await waitFor("the Hint read again", async () => ran.length === 2 || null);
    expect(ran).toEqual([
      { id: "hint-acme/site#7", senders: ["other", "writer"] },
      { id: "hint-acme/site#7~again", senders: ["stranger"] },
    ]);
  });
});
