import { describe, expect, it } from "vitest";
import { appendToWindow, type TranscriptWindow } from "../../lib/dashboard/transcript-window";

const entry = (id: number) => ({ id: String(id) });
const empty: TranscriptWindow<{ id: string }> = { entries: [], dropped: 0 };

describe("the live transcript's window", () => {
  it("keeps ids in numeric order and skips what it already shows (a reconnect replays)", () => {
    let w = appendToWindow(empty, [entry(9), entry(10)], 100);
    w = appendToWindow(w, [entry(10), entry(11), entry(2)], 100);
    expect(w.entries.map((e) => e.id)).toEqual(["9", "10", "11"]);
    expect(w.dropped).toBe(0);
  });

  it("keeps only the newest entries and counts the ones that left", () => {
    let w = empty;
    for (let i = 1; i <= 25; i++) w = appendToWindow(w, [entry(i)], 10);
    expect(w.entries.map((e) => e.id)).toEqual(["16", "17", "18", "19", "20", "21", "22", "23", "24", "25"]);
    expect(w.dropped).toBe(15);
    expect(appendToWindow(w, [], 10)).toBe(w);
  });
});
