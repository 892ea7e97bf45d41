"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";

/**
 * One way for a control to call the API: `act(fn)` runs the call, shows its refusal in the
 * API's own words (`error`), and refreshes the page's server data once it succeeded.
 */
export function useApiAction() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [refreshing, startTransition] = useTransition();
  async function act(fn: () => Promise<void>): Promise<boolean> {
    setBusy(true);
    setError(null);
    try {
      await fn();
      startTransition(() => router.refresh());
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { act, busy, pending: busy || refreshing, error };
}
