"use client";

import { useEffect, useState } from "react";
import { relativeTime } from "../../lib/dashboard/format";

/** Every relative time of the dashboard ticks together, twice a minute. */
const TICK_MS = 30_000;

/** A time, said relative to now and kept current (its exact UTC instant in the title). */
export function Time({ iso }: { iso: string | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!iso) return;
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, [iso]);
  if (!iso) return <span className="text-stone-500">—</span>;
  const t = Date.parse(iso);
  return (
    <time dateTime={iso} title={new Date(t).toISOString()} data-relative-time suppressHydrationWarning className="whitespace-nowrap">
      {relativeTime(t, now)}
    </time>
  );
}
