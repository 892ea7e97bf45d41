import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, type Simulator } from "../../../lib/sandbox/index";

/**
 * The Next webhook route handler itself, on the shared test database, configured the way
 * `npm start` configures the sandbox (ATELIER_SANDBOX_APP_FILE), against a simulator of its own.
 */
export async function webhookRouteUnderTest(): Promise<{ sim: Simulator; POST: (request: Request) => Promise<Response> }> {
  const sim = await startSimulator({});
  const dir = await mkdtemp(join(tmpdir(), "atelier-route-"));
  const file = join(dir, "sandbox-app.json");
  await writeFile(file, JSON.stringify({ baseUrl: sim.url, ...sim.app }));
  delete process.env.GITHUB_APP_ID;
  process.env.ATELIER_SANDBOX_APP_FILE = file;
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
  const { POST } = await import("../../../app/api/github/webhooks/route");
  return { sim, POST };
}
