/**
 * What the Run page's live transcript keeps: the newest `max` entries, in id order. An entry
 * already shown (a reconnect replays from Last-Event-ID) is not added twice; the entries that
 * leave the window are counted, so the page can say how many it no longer shows.
 */

export const LIVE_TRANSCRIPT_ENTRIES = 2_000;

export interface TranscriptWindow<E extends { id: string }> {
  entries: E[];
  /** Entries shown earlier and no longer on the page. */
  dropped: number;
}

export function appendToWindow<E extends { id: string }>(window: TranscriptWindow<E>, incoming: readonly E[], max = LIVE_TRANSCRIPT_ENTRIES): TranscriptWindow<E> {
  let last = window.entries.length ? Number(window.entries[window.entries.length - 1]!.id) : 0;
  const fresh: E[] = [];
  for (const e of incoming) {
    const id = Number(e.id);
    if (id <= last) continue;
    fresh.push(e);
    last = id;
  }
  if (fresh.length === 0) return window;
  const all = window.entries.concat(fresh);
  const over = Math.max(0, all.length - max);
  return { entries: over ? all.slice(over) : all, dropped: window.dropped + over };
}
