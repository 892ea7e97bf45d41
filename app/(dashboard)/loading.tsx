export default function Loading() {
  return (
    <div aria-busy="true" aria-live="polite" className="animate-pulse space-y-3">
      <div className="h-6 w-48 rounded bg-stone-200" />
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        {Array.from({ length: 4 }, (_, i) => (
          <div key={i} className="h-40 rounded-lg bg-stone-200" />
        ))}
      </div>
      <span className="sr-only">Loading…</span>
    </div>
  );
}
