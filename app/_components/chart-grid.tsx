/** A column chart's horizontal grid: a line and a label at each tick of its scale (chartScale). */
export function ChartGrid({ ticks, max, left, right, top, plotH }: { ticks: { value: number; label: string }[]; max: number; left: number; right: number; top: number; plotH: number }) {
  return ticks.map((t) => {
    const y = top + plotH - (t.value / max) * plotH;
    return (
      <g key={t.label} data-testid="chart-tick">
        <line x1={left} x2={right} y1={y} y2={y} stroke="#e7e5e4" strokeWidth={1} />
        <text x={left - 6} y={y + 4} textAnchor="end" fontSize={11} fill="#57534e">
          {t.label}
        </text>
      </g>
    );
  });
}
