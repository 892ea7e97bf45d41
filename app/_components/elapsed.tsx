"use client";

import { useEffect, useState } from "react";

/** Seconds as "42 s", "3 min 05 s", "1 h 02 min". */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** How long since `since`, ticking every second. */
export function Elapsed({ since, testId }: { since: string; testId?: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  return (
    <time dateTime={since} data-testid={testId} suppressHydrationWarning className="tabular-nums">
      {elapsedText(now - Date.parse(since))}
    </time>
  );
}
