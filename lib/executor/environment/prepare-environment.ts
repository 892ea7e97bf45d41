import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { Failure } from "../../engine/failure";
import type { AttemptBox } from "../agent-sandbox/box";
import { parseEgressRule, type EgressRule } from "../agent-sandbox/policy";
import { withDetectedPaths } from "./detect-ecosystem";
import type { EnvironmentSpec } from "./environment-spec";
import { runSetup, type SetupRequest } from "./run-setup";
import { findSnapshot, restoreSnapshot, saveSnapshot, snapshotKey, toolchainIdentity, type SnapshotStore } from "./snapshot-store";
import { pathProblem } from "./snapshot-tree";

/**
 * Prepares an Attempt's environment before its agent: restores the repository's snapshot of
 * the same key when there is one (setup skipped), else runs setup in the sandbox and, when it
 * passed and the Attempt may (a trusted trigger on the default branch), keeps its cache paths
 * as the snapshot the next Attempts restore.
 */

/** What setup is run with, as run-setup.ts takes it (its own sandbox, output, limits). */
export interface PrepareRequest extends Pick<SetupRequest, "sandbox" | "toolchains" | "emit" | "redactor" | "signal" | "timeoutMs" | "killGraceMs"> {
  spec: EnvironmentSpec;
  box: AttemptBox;
  /** The repository's GitHub id; null: not registered, no snapshot. */
  repositoryId: string | null;
  /** May write the snapshot: a trusted trigger, starting from the default branch. */
  mayWrite: boolean;
  store: SnapshotStore | null;
  /** The instance's registry allowlist (`registries:`). */
  registries: readonly string[];
  readOnlyPaths: readonly string[];
  system: (text: string) => void;
}

export type PrepareOutcome =
  /** `checkoutCache`: the cache paths inside the checkout (the harvest never commits them). */
  | { tag: "Ready"; checkoutCache: string[] }
  | { tag: "Failed"; failure: Failure }
  | { tag: "Canceled" };

const mb = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;
const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split("\n")[0];
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A key file's content, read without following a link; null when missing or a link. */
async function keyFileContent(worktree: string, rel: string): Promise<Buffer | null> {
  const { problem, missing } = await pathProblem(worktree, rel);
  if (problem || missing) return null;
  const file = await open(join(worktree, rel), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!file) return null;
  try {
    return await file.readFile();
  } finally {
    await file.close();
  }
}

export async function prepareEnvironment(req: PrepareRequest): Promise<PrepareOutcome> {
  const spec = withDetectedPaths(req.spec, req.box.worktree);
  if (!spec.setup) return { tag: "Ready", checkoutCache: [] };
  if (spec.ecosystems.length) req.system(`environment: detected ${spec.ecosystems.join(", ")}; cache ${spec.cache?.join(", ") || "nothing"}`);
  const cache = spec.cache ?? [];
  const checkoutCache = cache.filter((p) => !p.startsWith("~/"));
  const roots = { worktree: req.box.worktree, home: req.box.home };
  const keyFiles = await Promise.all((spec.key ?? []).map(async (path) => ({ path, content: await keyFileContent(req.box.worktree, path) })));
  const key =
    req.store && req.repositoryId && cache.length > 0
      ? snapshotKey({ setup: spec.setup, cache, env: spec.env, keyFiles, toolchain: toolchainIdentity(req.readOnlyPaths, req.toolchains) })
      : null;

  if (key && req.store && req.repositoryId) {
    const snapshot = await findSnapshot(req.store, req.repositoryId, key);
    if (snapshot) {
      const started = Date.now();
      const restored = await restoreSnapshot(req.store, snapshot, roots, { link: req.box.switchUser, owner: req.box.switchUser ? req.box.uid : null }).catch((err: unknown) => {
        req.system(`environment: snapshot ${key.slice(0, 12)} could not be restored (${firstLine(err)}); setup runs`);
        return null;
      });
      if (restored) {
        for (const s of restored.skipped) req.system(`environment: ${s} was not restored`);
        req.system(`environment restored from snapshot ${key.slice(0, 12)} (${snapshot.files} files, ${mb(snapshot.bytes)}, ${restored.linked ? "hard links" : "copies"}) in ${secs(Date.now() - started)}; setup skipped`);
        return { tag: "Ready", checkoutCache };
      }
    }
  }

  const registries = req.registries.map(parseEgressRule).filter((r): r is EgressRule => r !== null);
  req.system(`setup: running in ${req.sandbox ? "the sandbox" : "the checkout, unconfined (sandbox: off)"}; it reaches ${registries.length ? "only the instance's registries" : "no network"}`);
  const run = await runSetup({
    setup: spec.setup,
    env: spec.env,
    sandbox: req.sandbox,
    registries,
    toolchains: req.toolchains,
    cwd: req.box.worktree,
    home: req.box.home,
    emit: req.emit,
    redactor: req.redactor,
    signal: req.signal,
    timeoutMs: req.timeoutMs,
    killGraceMs: req.killGraceMs,
  });
  if (run.tag === "Canceled") return { tag: "Canceled" };
  if (run.tag === "Failed") {
    req.system(`setup failed after ${secs(run.durationMs)}`);
    return { tag: "Failed", failure: run.failure };
  }
  req.system(`setup passed in ${secs(run.durationMs)}`);

  if (!key || !req.store || !req.repositoryId) {
    if (cache.length === 0) req.system("environment: no cache paths (cache: or a detected ecosystem), so no snapshot is kept");
    return { tag: "Ready", checkoutCache };
  }
  if (!req.mayWrite) {
    req.system("environment: this Attempt does not keep a snapshot (only an Attempt of the default branch whose trigger was trusted writes one)");
    return { tag: "Ready", checkoutCache };
  }
  // a snapshot that cannot be written costs the next Attempt a setup, not this one its work
  const saved = await saveSnapshot(req.store, req.repositoryId, key, cache, roots).catch((err: unknown) => {
    req.system(`environment: no snapshot is kept (${firstLine(err)})`);
    return null;
  });
  if (saved?.tag === "Refused") req.system(`environment: ${saved.sentence}`);
  else if (saved?.tag === "Saved") {
    if (saved.tally.droppedLinks) req.system(`environment: ${saved.tally.droppedLinks} symbolic link(s) pointing out of the box were not kept`);
    req.system(`environment: kept snapshot ${key.slice(0, 12)} (${saved.snapshot.files} files, ${mb(saved.snapshot.bytes)})${saved.evicted ? `; evicted ${saved.evicted} least recently used` : ""}`);
  }
  return { tag: "Ready", checkoutCache };
}
