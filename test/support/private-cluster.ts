import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { freePort } from "./free-port";

/**
 * A Postgres cluster of the test's own (initdb in a temporary directory, its own port), for the
 * tests that stop the database under Atelier and start it again. initdb and postgres refuse to
 * run as root: as root, the cluster runs as the `postgres` user.
 */
export interface PrivateCluster {
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

const MIGRATIONS = resolve(__dirname, "../../prisma/migrations");

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = mkdtempSync(join(tmpdir(), "atelier-pgcluster-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
    const r = spawnSync(file, argv, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.stdout}`);
  };
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-w", "-t", "60", "-l", join(dir, "log"), "start"]);
  const stop = () => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  start();
  const url = `postgresql://postgres@127.0.0.1:${port}/atelier`;
  const admin = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE atelier`);
  await admin.end();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const dirs = readdirSync(MIGRATIONS)
    .filter((d) => statSync(join(MIGRATIONS, d)).isDirectory())
    .sort();
  for (const d of dirs) await client.query(readFileSync(join(MIGRATIONS, d, "migration.sql"), "utf8"));
  await client.end();
  return {
    url,
    stop,
    start,
    destroy() {
      try {
        stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
