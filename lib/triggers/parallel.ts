/**
 * Runs `fn` over `items`, at most `limit` at once. Every item is finished before this settles,
 * even when some fail (the cursor moves only after every Item finished); the first failure is
 * then thrown.
 */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        await fn(items[index]!, index);
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failures.length) throw failures[0];
}

/** Like forEachLimit, collecting each result or error. */
export async function mapSettledLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  await forEachLimit(items, limit, async (item, i) => {
    try {
      results[i] = { status: "fulfilled", value: await fn(item, i) };
    } catch (reason) {
      results[i] = { status: "rejected", reason };
    }
  });
  return results;
}
