import { ChartGrid } from "../../_components/chart-grid";
import { chartScale, formatCount } from "../../../lib/dashboard/format";
import type { Outcome } from "../../../lib/dashboard/insights";

/**
 * The outcome charts of Insights, inline SVG rendered on the server as the Usage charts are
 * (ADR 0084): every segment carries its outcome, its week and its count (data-*, and a <title>).
 */

export const OUTCOME_STYLE: Record<Outcome, { label: string; color: string }> = {
  merged: { label: "Merged", color: "#047857" },
  closed: { label: "Closed unmerged", color: "#a8a29e" },
  open: { label: "Pull request open", color: "#0369a1" },
  no_pull_request: { label: "No pull request", color: "#7c3aed" },
  failed: { label: "Failed", color: "#b91c1c" },
  canceled: { label: "Canceled", color: "#d97706" },
  in_progress: { label: "In progress", color: "#e7e5e4" },
};

export interface StackedColumn {
  label: string;
  parts: { outcome: Outcome; value: number }[];
}

/** A column per week, its Runs stacked by outcome (merged at the bottom), with the legend. */
export function OutcomeColumns({ title, columns, testId }: { title: string; columns: StackedColumn[]; testId: string }) {
  const W = 1000;
  const H = 200;
  const left = 40;
  const bottom = 20;
  const top = 8;
  const plotW = W - left - 8;
  const plotH = H - top - bottom;
  const totals = columns.map((c) => c.parts.reduce((s, p) => s + p.value, 0));
  const { max, ticks } = chartScale(totals, formatCount);
  const step = plotW / Math.max(1, columns.length);
  const barW = Math.max(3, step * 0.7);
  const shown = new Set(columns.flatMap((c) => c.parts.filter((p) => p.value > 0).map((p) => p.outcome)));
  return (
    <figure className="rounded-lg border border-stone-200 bg-white p-3">
      <figcaption className="mb-1 text-sm font-medium">{title}</figcaption>
      <svg data-testid={testId} role="img" aria-label={`${title}: ${formatCount(totals.reduce((s, t) => s + t, 0))} Runs`} viewBox={`0 0 ${W} ${H}`} className="h-auto w-full">
        <ChartGrid ticks={ticks} max={max} left={left} right={W - 8} top={top} plotH={plotH} />
        {columns.map((c, i) => {
          const x = left + i * step + (step - barW) / 2;
          let y = top + plotH;
          return (
            <g key={c.label} data-testid="outcome-column" data-week={c.label}>
              {c.parts.map((p) => {
                const h = (p.value / max) * plotH;
                y -= h;
                return p.value > 0 ? (
                  <rect key={p.outcome} data-testid="outcome-segment" data-outcome={p.outcome} data-value={p.value} x={x} y={y} width={barW} height={h} fill={OUTCOME_STYLE[p.outcome].color}>
                    <title>{`${c.label}: ${formatCount(p.value)} ${OUTCOME_STYLE[p.outcome].label.toLowerCase()}`}</title>
                  </rect>
                ) : null;
              })}
              {i % 2 === 0 || i === columns.length - 1 ? (
                <text x={x + barW / 2} y={H - 6} textAnchor="middle" fontSize={10} fill="#78716c">
                  {c.label.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <ul className="mt-2 flex flex-wrap gap-x-3 gap-y-1 text-xs text-stone-700">
        {Object.entries(OUTCOME_STYLE)
          .filter(([o]) => shown.has(o as Outcome))
          .map(([o, s]) => (
            <li key={o} className="flex items-center gap-1">
              <svg viewBox="0 0 10 10" className="h-2.5 w-2.5" aria-hidden="true">
                <rect width={10} height={10} rx={2} fill={s.color} />
              </svg>
              {s.label}
            </li>
          ))}
      </ul>
    </figure>
  );
}

/** Horizontal bars: a count per name (failures by category), largest first. */
export function CountBars({ title, rows, testId }: { title: string; rows: { name: string; value: number }[]; testId: string }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <figure className="rounded-lg border border-stone-200 bg-white p-3">
      <figcaption className="mb-2 text-sm font-medium">{title}</figcaption>
      {rows.length === 0 ? (
        <p className="text-sm text-stone-500">None in this range.</p>
      ) : (
        <ul data-testid={testId} className="space-y-1 text-sm">
          {rows.map((r) => (
            <li key={r.name} data-testid="count-bar" data-name={r.name} data-value={r.value} className="flex items-center gap-2">
              <span className="w-28 shrink-0 truncate text-stone-700">{r.name}</span>
              <svg viewBox="0 0 200 10" className="h-2.5 flex-1" role="img" aria-label={`${r.name}: ${formatCount(r.value)}`}>
                <rect width={(r.value / max) * 200} height={10} rx={2} fill="#b91c1c" />
              </svg>
              <span className="w-12 text-right tabular-nums">{formatCount(r.value)}</span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
