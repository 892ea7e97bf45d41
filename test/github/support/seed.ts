import { createPull, forceMergeable } from "../../../lib/sandbox/state/pulls";
import type { Simulator } from "../../../lib/sandbox/index";

const FAKE_SHA = "a".repeat(40);

/**
 * Opens a pull request straight in the simulator's state (no git push: fast), already
 * mergeable so that no background computation changes it later.
 */
export function openPull(sim: Simulator, fullName: string, input: { title: string; head?: string; body?: string; labels?: string[] }): number {
  const repo = sim.state.repoByFullName(fullName);
  const item = createPull(
    sim.state,
    repo,
    {
      title: input.title,
      body: input.body ?? null,
      head: input.head ?? `branch-${repo.nextNumber}`,
      headSha: FAKE_SHA,
      base: "main",
      baseSha: FAKE_SHA,
      labels: input.labels ?? [],
    },
    sim.state.findAccount("octo")!.id,
  );
  forceMergeable(item, true);
  return item.number;
}
