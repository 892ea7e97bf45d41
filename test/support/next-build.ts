import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "generated" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether the checkout at `root` has no Next.js build, or one older than a source it is made of. */
export function needsBuild(root: string): boolean {
  const id = join(root, ".next", "BUILD_ID");
  if (!existsSync(id)) return true;
  const built = statSync(id).mtimeMs;
  const sources = ["app", "lib", "jobs", "public"].filter((d) => existsSync(join(root, d))).map((d) => newestMtime(join(root, d)));
  const files = ["next.config.js", "postcss.config.mjs", "probot.config.ts", "proxy.ts", "instrumentation.ts"]
    .filter((f) => existsSync(join(root, f)))
    .map((f) => statSync(join(root, f)).mtimeMs);
  return Math.max(...sources, ...files) > built;
}
