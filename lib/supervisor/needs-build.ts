import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Directories and files whose change makes the dashboard's production build stale. */
const SOURCE_DIRS = ["app", "lib", "jobs", "public"];
const SOURCE_FILES = ["next.config.js", "postcss.config.mjs", "probot.config.ts", "proxy.ts", "instrumentation.ts"];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "generated" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether `root` has no `next build` yet, or a source newer than the one it has. */
export function needsBuild(root: string): boolean {
  const id = join(root, ".next", "BUILD_ID");
  if (!existsSync(id)) return true;
  const built = statSync(id).mtimeMs;
  const dirs = SOURCE_DIRS.filter((d) => existsSync(join(root, d))).map((d) => newestMtime(join(root, d)));
  const files = SOURCE_FILES.filter((f) => existsSync(join(root, f))).map((f) => statSync(join(root, f)).mtimeMs);
  return Math.max(...dirs, ...files) > built;
}
