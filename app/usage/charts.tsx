import { ChartGrid } from "../_components/chart-grid";
import { chartScale } from "../../lib/dashboard/format";

/**
 * Charts as inline SVG, rendered on the server: no chart library, no client JavaScript. Every
 * bar carries its label and value (data-*, and a <title> for the hover text).
 */

export interface Point {
  label: string;
  value: number;
}

/** A column per point (e.g. per day), with a light grid and its scale (ticks whose labels differ). */
export function ColumnChart({
  title,
  points,
  format,
  color = "#047857",
  testId,
}: {
  title: string;
  points: Point[];
  format: (n: number) => string;
  color?: string;
  testId: string;
}) {
  const W = 420;
  const H = 150;
  const left = 64;
  const bottom = 20;
  const top = 8;
  const plotW = W - left - 8;
  const plotH = H - top - bottom;
  const { max, ticks } = chartScale(
    points.map((p) => p.value),
    format,
  );
  const step = plotW / Math.max(1, points.length);
  const barW = Math.max(2, step * 0.7);
  const total = points.reduce((s, p) => s + p.value, 0);
  return (
    <figure className="rounded-lg border border-stone-200 bg-white p-3">
      <figcaption className="mb-1 flex items-baseline justify-between text-sm">
        <span className="font-medium">{title}</span>
        <span className="text-stone-500" data-testid={`${testId}-total`}>
          {format(total)}
        </span>
      </figcaption>
      <svg
        data-testid={testId}
        role="img"
        aria-label={`${title}: ${format(total)} in all`}
        viewBox={`0 0 ${W} ${H}`}
        className="h-auto w-full"
      >
        <ChartGrid ticks={ticks} max={max} left={left} right={W - 8} top={top} plotH={plotH} />
        {points.map((p, i) => {
          const h = (p.value / max) * plotH;
          const x = left + i * step + (step - barW) / 2;
          return (
            <g key={p.label}>
              <rect
                data-testid="chart-bar"
                data-label={p.label}
                data-value={p.value}
                x={x}
                y={top + plotH - h}
                width={barW}
                height={Math.max(0, h)}
                rx={1.5}
                fill={color}
              >
                <title>{`${p.label}: ${format(p.value)}`}</title>
              </rect>
              {i % 5 === 0 || i === points.length - 1 ? (
                <text x={x + barW / 2} y={H - 6} textAnchor="middle" fontSize={11} fill="#78716c">
                  {p.label.slice(-2)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

/** A thin horizontal meter: how much of a whole (or of a limit) is used. */
export function Meter({
  ratio,
  testId,
  label,
  kind = "limit",
}: {
  ratio: number | null;
  testId?: string;
  label: string;
  /** "limit": green, amber from 80 %, red at the limit; "share": one neutral color */
  kind?: "limit" | "share";
}) {
  const r = ratio === null ? 0 : Math.max(0, ratio);
  const color = ratio === null ? "#d6d3d1" : kind === "share" ? "#78716c" : r >= 1 ? "#b91c1c" : r >= 0.8 ? "#d97706" : "#047857";
  return (
    <svg data-testid={testId} data-ratio={ratio ?? ""} role="img" aria-label={label} viewBox="0 0 120 8" className="h-2 w-20 shrink-0 sm:w-24">
      <rect x={0} y={0} width={120} height={8} rx={4} fill="#f5f5f4" />
      <rect x={0} y={0} width={Math.min(1, r) * 120} height={8} rx={4} fill={color} />
    </svg>
  );
}
