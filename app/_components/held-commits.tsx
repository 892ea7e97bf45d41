import type { HeldCommits } from "../../lib/store/runs/held-commits";

/**
 * What a writer reads before pressing Push (ADR 0058): why the commits wait, the commits, every
 * file they change with its added and deleted lines, and the patch — as text (React escapes it),
 * bounded when it was stored; a cut says so.
 */
export function HeldCommitsReview({ held, why }: { held: HeldCommits; why: string | null }) {
  const added = held.files.reduce((n, f) => n + (f.additions ?? 0), 0);
  const deleted = held.files.reduce((n, f) => n + (f.deletions ?? 0), 0);
  return (
    <section aria-labelledby="review-title" data-testid="held-commits" className="rounded-lg border border-amber-300 bg-amber-50/40 p-3 text-sm">
      <h2 id="review-title" className="font-semibold">
        Review and push
      </h2>
      <p className="mt-1 text-stone-700">
        The agent&apos;s commits are held under <code className="font-mono text-xs">{held.ref}</code>: no branch has them, so no workflow has run them.
        Push makes <code className="font-mono text-xs">{held.branch}</code> and its pull request; the repository&apos;s CI then runs this code with
        its secrets. Discard leaves nothing of it on GitHub.
      </p>
      {why ? (
        <p className="mt-1 text-stone-700" data-testid="held-why">
          {why}
        </p>
      ) : null}
      <ul className="mt-2 space-y-0.5" data-testid="held-commit-list">
        {held.commits.map((c) => (
          <li key={c.sha} className="truncate">
            <code className="font-mono text-xs text-stone-500">{c.sha.slice(0, 12)}</code> {c.subject}
          </li>
        ))}
      </ul>
      <table className="mt-3 w-full text-left text-xs" data-testid="held-files">
        <caption className="mb-1 text-left text-stone-600">
          {held.files.length}
          {held.filesCut ? "+" : ""} file{held.files.length === 1 ? "" : "s"} changed, +{added} −{deleted}
          {held.filesCut ? " (the list is cut; the patch below and the branch after Push have them all)" : ""}
        </caption>
        <thead>
          <tr className="text-stone-500">
            <th className="font-medium">File</th>
            <th className="w-16 text-right font-medium">Added</th>
            <th className="w-16 text-right font-medium">Deleted</th>
          </tr>
        </thead>
        <tbody>
          {held.files.map((f) => (
            <tr key={f.path} data-testid="held-file">
              <td className="break-all font-mono">{f.path}</td>
              <td className="text-right text-emerald-800">{f.additions === null ? "binary" : `+${f.additions}`}</td>
              <td className="text-right text-red-800">{f.deletions === null ? "" : `−${f.deletions}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <pre data-testid="held-patch" className="mt-3 max-h-[32rem] overflow-auto whitespace-pre rounded bg-white p-2 font-mono text-xs ring-1 ring-stone-200">
        {held.patch}
      </pre>
      {held.patchCut ? (
        <p className="mt-1 font-medium text-amber-900" data-testid="held-patch-cut">
          The patch is cut here: it is longer than the Run page keeps. Read the rest with git (<code className="font-mono">git fetch origin {held.ref}</code>) before pressing Push.
        </p>
      ) : null}
    </section>
  );
}
