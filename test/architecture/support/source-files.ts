import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The source files below `dir` (generated code and node_modules left out) whose names match `pattern`. */
export function sourceFiles(dir: string, pattern = /\.(ts|tsx)$/): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "generated" || name === "node_modules") return [];
    if (statSync(path).isDirectory()) return sourceFiles(path, pattern);
    return pattern.test(name) ? [path] : [];
  });
}
