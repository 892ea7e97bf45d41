import { existsSync } from "node:fs";
import type { Db } from "../store/kernel/db";
import { countItems } from "../store/items/item-count";

/**
 * A sandbox that starts a new simulated GitHub (no kept `state.json`) over a database that
 * already holds Items — an earlier sandbox's, from before the simulator kept its world, or
 * after its folder was deleted: the Board would show Items the simulator does not have, and
 * labels on the demo issues would meet Events already recorded. The sentence that says so and
 * what to do, or null when the two agree.
 */
export async function staleSandboxSentence(db: Db, stateFile: string): Promise<string | null> {
  if (existsSync(stateFile)) return null;
  const items = await countItems(db);
  if (items === 0) return null;
  return `atelier: the sandbox's GitHub starts afresh (no ${stateFile} yet) but the database already holds ${items} Item${items === 1 ? "" : "s"} from before it; the Board shows them beside the new world's until you drop that database or point DATABASE_URL at a new one.`;
}
