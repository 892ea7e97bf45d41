import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { sourceFiles } from "./source-files";

const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const SPECIFIER = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** The file a relative import names, or null for a package's. */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), base.replace(/\.js$/, ".ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return base;
}

/** Every import between files of `root`/lib, as paths relative to `root`. */
export function libImports(root: string): { from: string; to: string }[] {
  const edges: { from: string; to: string }[] = [];
  for (const file of sourceFiles(join(root, "lib"), SOURCE)) {
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3] ?? "");
      if (target) edges.push({ from: relative(root, file), to: relative(root, target) });
    }
  }
  return edges;
}

/** The part of lib/ a file belongs to: its folder, or "(root)" for lib/errors.ts and the like. */
export const partOf = (path: string): string => {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1]! : "(root)";
};

/**
 * The imports that do not go down the layer order: from a part of lib/ into a part of the same
 * layer or of a layer above it (a part's own files import each other freely), or into a part the
 * order does not name.
 */
export function importsAgainstLayers(root: string, layers: readonly (readonly string[])[]): string[] {
  const layerOf = new Map(layers.flatMap((parts, i) => parts.map((part) => [part, i] as const)));
  const against: string[] = [];
  for (const { from, to } of libImports(root)) {
    if (!to.startsWith("lib/")) continue;
    const [a, b] = [partOf(from), partOf(to)];
    if (a === b) continue;
    const [la, lb] = [layerOf.get(a), layerOf.get(b)];
    if (la === undefined || lb === undefined || lb >= la) against.push(`${from} → ${to}`);
  }
  return against.sort();
}

/** The circles of lib/'s file graph (Tarjan's strongly connected components of more than one file, or a file importing itself). */
export function importCircles(root: string): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of libImports(root)) next.set(from, [...(next.get(from) ?? []), to]);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) circles.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return circles;
}
