import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduleWorker } from "../../jobs/processors/schedule";
import { bullConnection, POLL_TICK_SCHEDULER_ID, QUEUE_NAMES, RECONCILE_SCHEDULER_ID, scheduleSchedulerId } from "../../jobs/queues";
import type { Clock } from "../../lib/github/clock";
import { fireMissedTicks, fireSchedule } from "../../lib/triggers/fire-schedule";
import { setLoopPaused } from "../../lib/triggers/loop-status";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { eventually, installRepository, startFixture, type Fixture } from "../github/support/fixture";

class TestClock implements Clock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
}

const clock = new TestClock(Date.parse("2026-11-30T08:00:00Z"));
let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture({ clock });
});
afterAll(() => fx.close());

const scheduleConfig = (cron: string, extra = "") => `loops:
  nightly:
    on: { schedule: { cron: "${cron}", tz: Europe/Paris } }
    agent: demo${extra}
    prompt: Triage \${{ repository.full_name }} at \${{ item.tick.scheduledAtLocal }}
`;

async function ticks(repo: string): Promise<{ id: string; prompt: string }[]> {
  const { rows } = await fx.db.pool.query(
    `SELECT e.id, e.submission->>'prompt' AS prompt FROM events e WHERE e.repo = $1 AND e.kind = 'tick' ORDER BY e.id`,
    [repo],
  );
  return rows;
}

describe("schedule Loops", () => {
  it("fires the latest missed Tick once after a restart, and a repeat wake changes nothing", async () => {
    const { fullName } = await installRepository(fx, { owner: "sched-a", name: "app", config: scheduleConfig("0 6 * * *") });
    await pollRepository(fx.deps, fullName); // reads the config
    clock.set("2026-11-30T08:00:00Z");
    const [first] = await fireMissedTicks(fx.deps);
    expect(first).toMatchObject({ status: "fired", scheduledAt: new Date("2026-11-30T05:00:00Z"), opened: [expect.any(String)] });
    expect(await fireMissedTicks(fx.deps)).toMatchObject([{ status: "fired", opened: [] }]);
    // three days without a worker: only the latest Tick fires
    clock.set("2026-12-03T09:30:00Z");
    expect(await fireMissedTicks(fx.deps)).toMatchObject([{ status: "fired", scheduledAt: new Date("2026-12-03T05:00:00Z"), opened: [expect.any(String)] }]);
    expect((await ticks(fullName)).map((t) => JSON.parse(t.id)[2])).toEqual(["2026-11-30T05:00:00.000Z", "2026-12-03T05:00:00.000Z"]);
    expect((await ticks(fullName))[1]!.prompt).toBe(`Triage ${fullName} at 2026-12-03T06:00:00+01:00`);
  });

  it("fires each wall-clock time once across both daylight-saving changes in Europe/Paris", async () => {
    const { fullName } = await installRepository(fx, { owner: "sched-b", name: "app", config: scheduleConfig("30 2 * * *") });
    await pollRepository(fx.deps, fullName);
    for (const [from, to] of [
      ["2026-03-28T22:00:00Z", "2026-03-30T02:00:00Z"],
      ["2026-10-24T22:00:00Z", "2026-10-26T02:00:00Z"],
    ] as const) {
      // wake every 30 minutes around the changes, as a scheduler firing early, late and twice would
      for (let t = Date.parse(from); t < Date.parse(to); t += 30 * 60_000) await fireSchedule(fx.deps, fullName, "nightly", new Date(t));
    }
    const local = (await ticks(fullName)).map((t) => t.prompt.split(" at ")[1]);
    expect(local).toEqual([
      "2026-03-28T02:30:00+01:00", // the first wake fires the latest Tick before it
      "2026-03-29T03:30:00+02:00", // 02:30 does not exist that night: once, shifted by the gap
      "2026-03-30T02:30:00+02:00",
      "2026-10-24T02:30:00+02:00",
      "2026-10-25T02:30:00+02:00", // 02:30 happens twice that night: only the first
      "2026-10-26T02:30:00+01:00",
    ]);
  });

  it("skips a Tick whose if: is false, and a paused Loop", async () => {
    const { fullName } = await installRepository(fx, {
      owner: "sched-c",
      name: "app",
      config: scheduleConfig("0 6 * * *", "\n    if: startsWith(item.tick.scheduledAtLocal, '2026-12-01')"),
    });
    await pollRepository(fx.deps, fullName);
    expect(await fireSchedule(fx.deps, fullName, "nightly", new Date("2026-11-30T06:00:00Z"))).toMatchObject({
      status: "fired",
      targets: [{ result: { tag: "Skipped", reason: "condition_false" } }],
    });
    expect(await fireSchedule(fx.deps, fullName, "nightly", new Date("2026-12-01T06:00:00Z"))).toMatchObject({ opened: [expect.any(String)] });
    await setLoopPaused(fx.db, fullName, "nightly", true, "octo");
    expect(await fireSchedule(fx.deps, fullName, "nightly", new Date("2026-12-02T06:00:00Z"))).toMatchObject({ status: "skipped", reason: "paused" });
  });

  it("keeps one poll tick and one job scheduler per schedule Loop, and removes stale ones", async () => {
    const { fullName } = await installRepository(fx, { owner: "sched-d", name: "app", config: scheduleConfig("15 7 * * 1-5") });
    await pollRepository(fx.deps, fullName);
    await fx.workQueue.syncSchedulers();
    const polls = await fx.workQueue.queue(QUEUE_NAMES.poll).getJobSchedulers(0, -1);
    expect(polls.map((s) => s.key)).toEqual([POLL_TICK_SCHEDULER_ID]);
    const schedules = await fx.workQueue.queue(QUEUE_NAMES.schedules).getJobSchedulers(0, -1);
    expect(schedules.find((s) => s.key === scheduleSchedulerId(fullName, "nightly"))).toMatchObject({ pattern: "15 7 * * 1-5", tz: "Europe/Paris" });
    expect(await fx.workQueue.queue(QUEUE_NAMES.installations).getJobScheduler(RECONCILE_SCHEDULER_ID)).toBeTruthy();

    fx.sim.removeRepository({ repo: fullName });
    const { reconcileInstallations } = await import("../../lib/github/installation-sync");
    await reconcileInstallations(fx.deps);
    await fx.workQueue.syncSchedulers();
    const after = await fx.workQueue.queue(QUEUE_NAMES.poll).getJobSchedulers(0, -1);
    expect(after.map((s) => s.key)).toEqual([POLL_TICK_SCHEDULER_ID]);
    const afterTicks = await fx.workQueue.queue(QUEUE_NAMES.schedules).getJobSchedulers(0, -1);
    expect(afterTicks.map((s) => s.key)).not.toContain(scheduleSchedulerId(fullName, "nightly"));
  });

  it("the schedule worker fires a Tick job, and fires missed Ticks when it starts", async () => {
    const { fullName } = await installRepository(fx, { owner: "sched-e", name: "app", config: scheduleConfig("0 12 * * *") });
    await pollRepository(fx.deps, fullName);
    clock.set("2026-12-05T12:30:00Z");
    let worker: Worker | null = null;
    try {
      worker = createScheduleWorker(bullConnection(), fx.deps, { prefix: fx.prefix });
      await eventually(async () => ((await ticks(fullName)).length === 1 ? true : undefined));
      clock.set("2026-12-06T11:00:30Z"); // the 12:00 Paris Tick of Dec 6 is 11:00Z
      await fx.workQueue.queue(QUEUE_NAMES.schedules).add("tick", { repo: fullName, loop: "nightly" }, { removeOnComplete: true });
      await eventually(async () => ((await ticks(fullName)).length === 2 ? true : undefined));
    } finally {
      await worker?.close();
    }
  });
});
