import { describe, expect, it } from "vitest";
import { DrainingError, SlotPool } from "../../lib/runner/slots";

describe("a worker's Attempt slots", () => {
  it("go to the oldest Event first when one frees, ties by arrival", async () => {
    const pool = new SlotPool(1);
    const first = await pool.acquire(new Date("2026-01-01T00:00:05Z"));
    const order: string[] = [];
    const later = pool.acquire(new Date("2026-01-01T00:00:09Z")).then((s) => (order.push("09"), s));
    const older = pool.acquire(new Date("2026-01-01T00:00:01Z")).then((s) => (order.push("01"), s));
    const tie = pool.acquire(new Date("2026-01-01T00:00:01Z")).then((s) => (order.push("01-second"), s));
    first.release();
    (await older).release();
    (await tie).release();
    (await later).release();
    expect(order).toEqual(["01", "01-second", "09"]);
    expect(pool.used).toBe(0);
  });

  it("refuse new and waiting requests once admission closes, while held slots stay held until released", async () => {
    const pool = new SlotPool(1);
    const held = await pool.acquire(new Date());
    const waiting = pool.acquire(new Date());
    pool.close();
    await expect(waiting).rejects.toBeInstanceOf(DrainingError);
    await expect(pool.acquire(new Date())).rejects.toMatchObject({ token: "worker_draining", status: 503 });
    let idle = false;
    const whenIdle = pool.whenIdle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    held.release();
    held.release(); // twice is once
    await whenIdle;
    expect(pool.used).toBe(0);
  });
});
