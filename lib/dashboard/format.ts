/**
 * How the dashboard writes its numbers, honestly: a cost below a cent keeps its digits
 * ($0.0004, never $0.00), a time under a minute is said in seconds (3 s, never 0.0 min), a
 * chart's scale has ticks whose labels differ, and a relative time says how long ago.
 */

const GROUPED = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Dollars: cents from a cent up; below it, enough decimals for two significant digits (costs are kept to the micro-dollar). */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n) || n === 0) return "$0.00";
  const sign = n < 0 ? "-" : "";
  const a = Math.abs(n);
  if (a >= 0.01) {
    return `${sign}$${GROUPED.format(a)}`;
  }
  if (a < 0.000001) return `${sign}< $0.000001`;
  const digits = Math.min(6, Math.ceil(-Math.log10(a)) + 1);
  return `${sign}$${trimZeros(a.toFixed(digits))}`;
}

/** One Attempt's cost, to the hundredth of a cent ($0.4012); below a cent as formatUsd says it. */
export function formatUsdExact(n: number): string {
  return Number.isFinite(n) && Math.abs(n) >= 0.01 ? `${n < 0 ? "-" : ""}$${Math.abs(n).toFixed(4)}` : formatUsd(n);
}

/** Agent time given in minutes: seconds under a minute, minutes under an hour, then hours. */
export function formatMinutes(minutes: number): string {
  return formatSeconds(minutes * 60);
}

/** A duration given in milliseconds (null: not known), as formatSeconds says it. */
export function formatDurationMs(ms: number | null): string {
  return ms === null ? "—" : formatSeconds(ms / 1000);
}

function formatSeconds(seconds: number): string {
  const s = Number.isFinite(seconds) ? Math.max(0, seconds) : 0;
  if (s === 0) return "0 s";
  if (s < 10) return `${trimZeros(s.toFixed(1))} s`;
  if (s < 59.5) return `${Math.round(s)} s`;
  const m = s / 60;
  if (m < 10) return `${trimZeros(m.toFixed(1))} min`;
  if (m < 59.5) return `${Math.round(m)} min`;
  return `${trimZeros((m / 60).toFixed(1))} h`;
}

/** A count: whole numbers grouped (1,234); a fraction (a rate) to one decimal. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return "0";
  return Number.isInteger(n) ? n.toLocaleString("en-US") : trimZeros(n.toFixed(1));
}

/** "1 Run", "3 Runs": a count with what it counts. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/**
 * A chart's scale for values ≥ 0: its top (a round number at or above the largest value) and
 * its ticks, bottom first, each with a label that no other tick shares. An empty chart has
 * one tick, 0.
 */
export function chartScale(values: readonly number[], format: (n: number) => string): { max: number; ticks: { value: number; label: string }[] } {
  const top = Math.max(0, ...values.filter(Number.isFinite));
  if (top === 0) return { max: 1, ticks: [{ value: 0, label: format(0) }] };
  const max = niceCeil(top);
  const ticks: { value: number; label: string }[] = [];
  for (const f of [0, 0.5, 1]) {
    const value = max * f;
    const label = format(value);
    if (!ticks.some((t) => t.label === label)) ticks.push({ value, label });
  }
  return { max, ticks };
}

/** The smallest of 1, 2, 5 × a power of ten that is ≥ n (n > 0). */
export function niceCeil(n: number): number {
  const p = 10 ** Math.floor(Math.log10(n));
  const m = n / p;
  // 1e-4 / 1e-4 may come out a hair over 1: compare with a tolerance
  const step = m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10;
  return Number((step * p).toPrecision(12));
}

/** How long ago `t` was, seen at `now` (ms since the epoch); a date after 30 days. */
export function relativeTime(t: number, now: number): string {
  const s = Math.round((now - t) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 30 * 86400) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

function trimZeros(fixed: string): string {
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}
