// A local npm registry (verdaccio) for the tests: node verdaccio-server.mjs <dir> <port>.
// No uplinks: it serves only what the tests publish, and never reaches the internet.
import { join } from "node:path";
import { runServer } from "verdaccio";

const [dir, port] = process.argv.slice(2);
const server = await runServer({
  self_path: dir,
  storage: join(dir, "storage"),
  auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: 10 } },
  uplinks: {},
  packages: { "**": { access: "$all", publish: "$authenticated" } },
  web: { enable: false },
  log: { type: "stdout", format: "json", level: "error" },
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
