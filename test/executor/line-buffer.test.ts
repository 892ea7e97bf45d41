import { describe, expect, it } from "vitest";
import { LineBuffer } from "../../lib/executor/line-buffer";

describe("LineBuffer", () => {
  it("emits whole lines and keeps the partial one", () => {
    const out: string[] = [];
    const b = new LineBuffer((t) => out.push(t), 1_000);
    b.push("one\ntw");
    b.push("o\nthree");
    expect(out).toEqual(["one\n", "two\n"]);
    b.end();
    expect(out).toEqual(["one\n", "two\n", "three"]);
  });

  it("shows a partial line once it has waited long enough", async () => {
    const out: string[] = [];
    const b = new LineBuffer((t) => out.push(t), 30);
    b.push("Continue? ");
    expect(out).toEqual([]);
    // waits on the condition, not on a margin over the 30 ms: a busy machine may run timers late
    await expect.poll(() => out, { timeout: 10_000 }).toEqual(["Continue? "]);
    b.push("yes\n");
    b.end();
    expect(out).toEqual(["Continue? ", "yes\n"]);
  });
});
