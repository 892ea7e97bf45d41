import type { Fixture } from "../../github/support/fixture";

/** Points the route handlers (whose pool opens on first use) at the fixture's own schema and simulator. */
export function pointRoutesAt(fx: Fixture): void {
  const url = new URL(process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test");
  url.searchParams.set("options", `-c search_path=${(fx.db as unknown as { schema: string }).schema}`);
  process.env.DATABASE_URL = url.toString();
  process.env.GITHUB_API_URL = fx.sim.url;
}
