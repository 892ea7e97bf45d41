import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { busyPortSentence, isPortBusy } from "../../lib/supervisor/busy-port";
import { exitSentence } from "../../lib/supervisor/exit-sentence";
import { nextCrashCount, restartDelayMs, RESTART_MAX_MS, STABLE_AFTER_MS } from "../../lib/supervisor/restart-backoff";

describe("a child's end in words", () => {
  it.each([
    [0, null, "the worker exited (code 0)"],
    [1, null, "the worker exited with code 1"],
    [null, "SIGKILL", "the worker was killed by SIGKILL"],
    [null, "SIGSEGV", "the worker was killed by SIGSEGV"],
    [null, null, "the worker exited with code unknown"],
  ] as const)("code %s, signal %s → %s", (code, signal, sentence) => {
    expect(exitSentence("the worker", code, signal)).toBe(sentence);
  });
});

describe("restart backoff", () => {
  it("waits 1 s after the first crash, doubling to at most 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map(restartDelayMs)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, RESTART_MAX_MS, RESTART_MAX_MS, RESTART_MAX_MS]);
    expect(restartDelayMs(0)).toBe(1_000);
  });

  it("counts crashes in a row; a child that stayed up a minute starts again from one", () => {
    expect(nextCrashCount(0, 10)).toBe(1);
    expect(nextCrashCount(3, STABLE_AFTER_MS - 1)).toBe(4);
    expect(nextCrashCount(5, STABLE_AFTER_MS)).toBe(1);
  });
});

describe("a busy port", () => {
  it("is named with what needs it and how to choose another, in one sentence", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    try {
      expect(await isPortBusy(port)).toBe(true);
      const sentence = await busyPortSentence([{ port, purpose: "the dashboard", variable: "PORT" }]);
      expect(sentence).toBe(
        `atelier: port ${port}, which the dashboard needs, is already in use (another \`npm start\` still running?): stop what holds it, or choose another with PORT=<port>.`,
      );
      expect(sentence?.split("\n")).toHaveLength(1);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    expect(await isPortBusy(port)).toBe(false);
    expect(await busyPortSentence([{ port, purpose: "the dashboard", variable: "PORT" }])).toBeNull();
  });
});
