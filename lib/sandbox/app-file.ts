import { rename, writeFile } from "node:fs/promises";
import type { Simulator } from "./index";

/**
 * Writes the simulator's App as the sandbox file Atelier reads (ATELIER_SANDBOX_APP_FILE): its
 * URLs and credentials, private key included — so readable by this user only, and written whole
 * then renamed, so a reader never sees half a file.
 */
export async function writeSandboxAppFile(sim: Simulator, path: string): Promise<void> {
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, JSON.stringify({ baseUrl: sim.url, webUrl: sim.url, appId: sim.app.id, ...sim.app }, null, 2), { mode: 0o600 });
  await rename(partial, path);
}
