import { itemEventKey, itemKey } from "../../lib/engine/ids";
import type { EventInput } from "../../lib/store/runs/claim";

/** An issue Event of `loop` on `repo#number` with the given content hash. */
export function itemEvent(
  repo: string,
  number: number,
  hash: string,
  opts: { loop?: string; generation?: number; maxCycles?: number | null; approvalRequired?: boolean } = {},
): EventInput {
  const loop = opts.loop ?? "start-dev";
  const generation = opts.generation ?? 0;
  return {
    id: itemEventKey(loop, repo, number, hash, generation),
    kind: "item",
    loop,
    repo,
    itemKey: itemKey(repo, number),
    number,
    contentHash: hash,
    generation,
    submission: {
      prompt: `Implement #${number} (${hash})`,
      agent: "demo",
      approvalRequired: opts.approvalRequired ?? false,
      maxCycles: opts.maxCycles === undefined ? 3 : opts.maxCycles,
    },
  };
}
