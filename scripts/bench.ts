// `npm run bench`: every benchmark, each printing `BENCH <name> <value> <unit>` and
// `RATIO <name> <value>` lines measured side by side in one run. `npm run bench -- claim`
// runs one of them.
import { prepareDatabase } from "./bench/database";
import { BENCHES } from "./bench/index";

const url = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_bench";
process.env.DATABASE_URL = url;

const only = process.argv.slice(2);
await prepareDatabase(url);
for (const [name, run] of Object.entries(BENCHES)) {
  if (only.length && !only.includes(name)) continue;
  console.log(`# ${name}`);
  await run(url);
}
process.exit(0);
