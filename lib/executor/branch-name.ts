/** A Loop name as one safe ref component. */
function refComponent(s: string): string {
  const safe = s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+|[.-]+$/g, "").replace(/\.{2,}/g, ".");
  return safe.endsWith(".lock") ? `${safe.slice(0, -5)}-lock` : safe || "loop";
}

/** `2024-01-02T06:00:00.000Z` → `20240102T060000Z`. */
function compactTimestamp(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z").replace(/[-:]/g, "");
}

/**
 * The branch a Run's work is pushed to: `atelier/<loop>/<number>` for an Item, and
 * `atelier/<loop>/tick-<timestamp>` for a schedule Tick.
 */
export function runBranch(loop: string, item: { number: number } | { scheduledAt: Date }): string {
  const tail = "number" in item ? String(item.number) : `tick-${compactTimestamp(item.scheduledAt)}`;
  return `atelier/${refComponent(loop)}/${tail}`;
}
