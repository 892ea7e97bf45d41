import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { SANDBOX_HOME, SANDBOX_OUT, SANDBOX_RUN, SANDBOX_BIN, SANDBOX_OBJECTS, SANDBOX_WORKSPACE } from "../agent-sandbox/bwrap-args";

/**
 * Toolchains: directories the instance offers besides the host's /usr (several Node or Python
 * versions), named in its roster (`toolchains:` in atelier.config.yml, under one of its
 * `toolchain_roots:`) and picked by a repository's `environment: { toolchain: … }`. Each is
 * bound read-only at its own path into the sandboxes of setup, the agent and verify, its `bin`
 * first on their PATH; which ones, and what their `bin` holds, is part of the snapshot's key.
 *
 * A path is checked twice: when the config is loaded (inside a root, no link out of it) and
 * when an Attempt mounts it (the same, on the worker's filesystem as it is then, and never a
 * folder that holds the worker's own).
 */

export interface Toolchain {
  name: string;
  /** Absolute, normalized; where the sandbox sees it. */
  path: string;
  /** The toolchain root (normalized) it lies under. */
  root: string;
}

/** A toolchain as an Attempt mounts it. */
export interface MountedToolchain extends Toolchain {
  /** Its real path on the worker (links resolved): what is bound. */
  source: string;
  /** sha256 of its bin folder's listing (names, kinds, sizes, times, link targets). */
  fingerprint: string;
}

/** Where toolchains may live when the config names no `toolchain_roots:`. */
export const DEFAULT_TOOLCHAIN_ROOTS: readonly string[] = Object.freeze(["/opt/atelier/toolchains"]);

/** A toolchain's name: what a repository writes (node-22, python-3.12). */
export const TOOLCHAIN_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/i;

/** Roots that would hand the sandbox the host's own files, or sit on the sandbox's own places. */
const HOST_ROOTS = new Set(["/", "/etc", "/root", "/run", "/boot", "/home", "/tmp", "/var"]);
const UNDER_NO_ROOT = ["/proc", "/sys", "/dev", SANDBOX_WORKSPACE, SANDBOX_HOME, SANDBOX_OUT, SANDBOX_RUN, SANDBOX_BIN, SANDBOX_OBJECTS, "/atelier"];

const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
const below = (path: string, dir: string) => path.startsWith(`${dir}/`);

function real(path: string): string | null {
  try {
    return realpathSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Why `root` cannot be a toolchain root; null when it can. */
export function toolchainRootProblem(root: string): string | null {
  if (!isAbsolute(root) || root.split("/").includes("..")) return "is not an absolute path without ..";
  const clean = resolve(root);
  const resolved = real(clean) ?? clean;
  for (const p of [clean, resolved]) {
    if (HOST_ROOTS.has(p)) return `is ${p}, which holds the host's own files: name a folder of toolchains only, e.g. /opt/atelier/toolchains`;
    const place = UNDER_NO_ROOT.find((d) => within(p, d));
    if (place) return `is under ${place}, which the sandbox has of its own`;
  }
  return null;
}

/**
 * Where a roster's toolchain path stands: the root it lies under, or why it is refused — not
 * absolute, outside every root, or, where it exists on this host, a link (or a folder on the
 * way) that leads out of its root, or not a folder with a bin/. A path this host does not
 * have is accepted here (a dashboard's host need not hold the workers' toolchains) and refused
 * when an Attempt mounts it.
 */
export function locateToolchain(path: string, roots: readonly string[]): { root: string } | { problem: string } {
  if (!isAbsolute(path) || path.split("/").includes("..")) return { problem: "is not an absolute path without .." };
  const clean = resolve(path);
  const root = roots.map((r) => resolve(r)).find((r) => below(clean, r));
  if (!root) return { problem: `is outside the toolchain roots (${roots.join(", ")}): put it under one, or add its folder to toolchain_roots:` };
  const problem = realProblem({ path: clean, root });
  return problem && !problem.missing ? { problem: problem.text } : { root };
}

/** What is wrong with a toolchain on this host as it is now; `missing`: the host has no such path. */
function realProblem(t: Pick<Toolchain, "path" | "root">): { text: string; missing?: true } | null {
  const source = real(t.path);
  if (source === null) return { text: "does not exist on this worker", missing: true };
  const rootReal = real(t.root) ?? t.root;
  if (!below(source, rootReal)) return { text: `leads to ${source}, outside its toolchain root ${t.root} (a link out of the root is refused)` };
  if (!statSync(source).isDirectory()) return { text: "is not a folder" };
  const bin = lstatSync(join(source, "bin"), { throwIfNoEntry: false });
  if (!bin?.isDirectory()) return { text: "has no bin/ folder (its programs go there)" };
  return null;
}

/** sha256 of what `bin/` holds: a toolchain replaced in place is another toolchain. */
function binFingerprint(source: string): string {
  const bin = join(source, "bin");
  const h = createHash("sha256");
  for (const name of readdirSync(bin).sort()) {
    const info = lstatSync(join(bin, name));
    const link = info.isSymbolicLink() ? readlinkSync(join(bin, name)) : "";
    h.update(JSON.stringify([name, info.mode, info.size, info.mtimeMs, link]));
  }
  return h.digest("hex");
}

export class ToolchainRefusedError extends Error {}

/**
 * The Attempt's toolchains, checked on this worker now: each inside its root (links resolved),
 * a folder with a bin/, and holding none of `own` (the worker's workspace, its snapshots).
 * Throws ToolchainRefusedError with the sentence.
 */
export function mountToolchains(toolchains: readonly Toolchain[], own: readonly string[]): MountedToolchain[] {
  const owned = own.map((p) => real(p) ?? resolve(p));
  return toolchains.map((t) => {
    const problem = realProblem(t);
    if (problem) throw new ToolchainRefusedError(`the toolchain ${t.name} (${t.path}) cannot be mounted: it ${problem.text}`);
    const source = realpathSync(t.path);
    const held = owned.find((p) => within(p, source));
    if (held) throw new ToolchainRefusedError(`the toolchain ${t.name} (${t.path}) cannot be mounted: it holds ${held}, which is the worker's own`);
    return { ...t, source, fingerprint: binFingerprint(source) };
  });
}

/** PATH with the toolchains' bin folders first, in the order the repository named them. */
export function toolchainPath(toolchains: readonly Pick<Toolchain, "path">[], base: string): string {
  return [...toolchains.map((t) => `${t.path}/bin`), base].join(":");
}

/** What the snapshot's key takes of the toolchains. */
export function toolchainsIdentity(toolchains: readonly MountedToolchain[]): string[][] {
  return toolchains.map((t) => [t.name, t.source, t.fingerprint]);
}

/** The transcript's line: which toolchains the Attempt has, and where. */
export function toolchainsNote(toolchains: readonly MountedToolchain[]): string {
  const list = toolchains.map((t) => `${t.name} (${t.path}${t.source !== t.path ? ` → ${t.source}` : ""})`).join(", ");
  return `toolchains: ${list}, read-only, bin first on PATH for setup, the agent and verify`;
}
