"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";

/**
 * Keeps a server-rendered page live: listens to /api/v1/changes (server-sent `changed` events,
 * one per burst of Run and Item changes) and refreshes the page's server data, one refresh at a time —
 * a change during a refresh asks for one more after it. Says whether it is live.
 */
export function LiveRefresh() {
  const router = useRouter();
  const [status, setStatus] = useState<"connecting" | "live" | "reconnecting">("connecting");
  const busy = useRef(false);
  const again = useRef(false);

  useEffect(() => {
    const refresh = () => {
      if (busy.current) {
        again.current = true;
        return;
      }
      busy.current = true;
      router.refresh();
      // router.refresh() returns nothing to await; the next frame after a short pause is enough
      setTimeout(() => {
        busy.current = false;
        if (again.current) {
          again.current = false;
          refresh();
        }
      }, 300);
    };
    const source = new EventSource("/api/v1/changes");
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("changed", refresh);
    source.addEventListener("error", () => setStatus("reconnecting"));
    return () => source.close();
  }, [router]);

  return (
    <span data-testid="live-status" data-status={status} className="inline-flex items-center gap-1 text-xs text-stone-600">
      <span aria-hidden className={`h-2 w-2 rounded-full ${status === "live" ? "bg-emerald-500" : "bg-stone-400"}`} />
      {status === "live" ? "Live" : status === "connecting" ? "Connecting…" : "Reconnecting…"}
    </span>
  );
}
