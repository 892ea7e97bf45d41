import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDb, type Db } from "../../../lib/store/kernel/db";
import { startPrivateCluster, type PrivateCluster } from "../../support/private-cluster";
import { startRunner, uniquePrefix, type RunnerUnderTest, type StartRunnerOptions } from "./runner-fixture";
import { startSimWorld, type SimWorld } from "./sim-world";

/**
 * A runner whose Postgres is a cluster of the test's own, to stop and start (an outage): its
 * pool of `poolSize`, a sim world, and a workspace root; `close` takes it all down.
 */
export interface OutageRig {
  cluster: PrivateCluster;
  db: Db;
  world: SimWorld;
  runner: RunnerUnderTest;
  close(): Promise<void>;
}

export async function startOutageRig(name: string, poolSize: number, options: Pick<StartRunnerOptions, "log" | "roster">): Promise<OutageRig> {
  const cluster = await startPrivateCluster();
  const db = createDb(cluster.url, poolSize);
  const workspaceRoot = mkdtempSync(join(tmpdir(), `atelier-${name}-ws-`));
  let world: SimWorld | undefined;
  let runner: RunnerUnderTest | undefined;
  const close = async () => {
    await runner?.close();
    await world?.close();
    await db.close();
    cluster.destroy();
    rmSync(workspaceRoot, { recursive: true, force: true });
  };
  try {
    world = await startSimWorld(db);
    runner = await startRunner({ db, prefix: uniquePrefix(name), github: world.github, workspaceRoot, leaseTtlMs: 3_000, ...options });
    return { cluster, db, world, runner, close };
  } catch (err) {
    await close();
    throw err;
  }
}
