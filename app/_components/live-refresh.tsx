"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";

/**
 * Keeps a server-rendered page live: listens to /api/v1/changes (server-sent `changed` events,
 * one per burst of Run and Item changes) and refreshes the page's server data, one refresh at a
 * time — a change during a refresh asks for one more once it has landed (a second
 * `router.refresh()` while one is in flight would abandon the first and start over, so a
 * steady stream of changes would keep the page from ever updating). Says whether it is live.
 */
export function LiveRefresh() {
  const router = useRouter();
  const [status, setStatus] = useState<"connecting" | "live" | "reconnecting">("connecting");
  const [refreshing, startTransition] = useTransition();
  const busy = useRef(false);
  const again = useRef(false);
  const refresh = useRef(() => {});
  refresh.current = () => {
    if (busy.current) {
      again.current = true;
      return;
    }
    busy.current = true;
    startTransition(() => router.refresh());
  };

  // the transition ends when the refreshed page is on screen: then the change that came meanwhile
  useEffect(() => {
    if (refreshing) return;
    busy.current = false;
    if (again.current) {
      again.current = false;
      refresh.current();
    }
  }, [refreshing]);

  useEffect(() => {
    const source = new EventSource("/api/v1/changes");
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("changed", () => refresh.current());
    source.addEventListener("error", () => setStatus("reconnecting"));
    return () => source.close();
  }, []);

  return (
    <span data-testid="live-status" data-status={status} className="inline-flex items-center gap-1 text-xs text-stone-600">
      <span aria-hidden className={`h-2 w-2 rounded-full ${status === "live" ? "bg-emerald-500" : "bg-stone-400"}`} />
      {status === "live" ? "Live" : status === "connecting" ? "Connecting…" : "Reconnecting…"}
    </span>
  );
}
