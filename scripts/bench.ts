// `npm run bench`: every benchmark, each printing `BENCH <name> <value> <unit>` and
// `RATIO <name> <value>` lines measured side by side in one run. `npm run bench -- claim`
// runs one of them.
import { execFileSync } from "node:child_process";
import pg from "pg";
import { BENCHES } from "./bench/index";

const url = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_bench";
process.env.DATABASE_URL = url;

async function prepareDatabase(): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const name = new URL(url).pathname.slice(1);
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  execFileSync("npx", ["prisma", "migrate", "deploy"], { stdio: "pipe", env: { ...process.env, CHECKPOINT_DISABLE: "1" } });
}

const only = process.argv.slice(2);
await prepareDatabase();
for (const [name, run] of Object.entries(BENCHES)) {
  if (only.length && !only.includes(name)) continue;
  console.log(`# ${name}`);
  await run(url);
}
process.exit(0);
