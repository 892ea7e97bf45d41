// `npm run bench`: every benchmark, each printing `BENCH <name> <value> <unit>` and
// `RATIO <name> <value>` lines measured side by side in one run. `npm run bench -- burst`
// runs one of them, `npm run bench -- claim` the claim's (burst and engine).
import { prepareDatabase } from "./bench/database";
import { BENCH_GROUPS, BENCHES } from "./bench/index";

const url = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_bench";
process.env.DATABASE_URL = url;

const only = process.argv.slice(2).flatMap((name) => BENCH_GROUPS[name] ?? [name]);
const unknown = only.filter((name) => !(name in BENCHES));
if (unknown.length) {
  console.error(`bench: no benchmark named ${unknown.join(", ")}; choose from ${[...Object.keys(BENCHES), ...Object.keys(BENCH_GROUPS)].join(", ")}`);
  process.exit(2);
}
await prepareDatabase(url);
for (const [name, run] of Object.entries(BENCHES)) {
  if (only.length && !only.includes(name)) continue;
  console.log(`# ${name}`);
  await run(url);
}
process.exit(0);
