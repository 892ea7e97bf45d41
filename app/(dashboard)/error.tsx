"use client";

export default function DashboardError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div role="alert" className="mx-auto max-w-lg rounded-lg border border-red-200 bg-red-50 p-5 text-sm text-red-900">
      <p className="font-semibold">This page could not be shown.</p>
      <p className="mt-1">Atelier hit an unexpected error{error.digest ? ` (reference ${error.digest})` : ""}; the server log has the details.</p>
      <button type="button" onClick={reset} className="mt-3 rounded-md bg-red-700 px-3 py-1.5 font-medium text-white hover:bg-red-800">
        Try again
      </button>
    </div>
  );
}
