/** Runs `worker` on `concurrency` lanes until `total` operations are done; returns ops/s. */
export async function throughput(total: number, concurrency: number, op: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  return (total / (performance.now() - t0)) * 1000;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export const median = (values: number[]): number => percentile(values, 50);

export const bench = (name: string, value: number, unit: string) => console.log(`BENCH ${name} ${value.toFixed(2)} ${unit}`);
export const ratio = (name: string, value: number) => console.log(`RATIO ${name} ${value.toFixed(3)}`);

/** The median time of `rounds` calls of `fn`, in ms, after one warm-up call. */
export async function p50(rounds: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i <= rounds; i++) {
    const t0 = performance.now();
    await fn();
    if (i > 0) times.push(performance.now() - t0);
  }
  return median(times);
}
