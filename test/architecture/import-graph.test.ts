import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, it } from "vitest";
import { sourceFiles } from "./support/source-files";

const ROOT = resolve(__dirname, "../..");
const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const SPECIFIER = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;


function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith(".") && !spec.startsWith("@/")) return null;
  const base = spec.startsWith("@/") ? join(ROOT, spec.slice(2)) : resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), base.replace(/\.js$/, ".ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return base;
}

/** Follows every import reachable from lib/ and returns the edges that leave for app/ or jobs/. */
function forbiddenEdges(): string[] {
  const seen = new Set<string>();
  const bad: string[] = [];
  const queue = sourceFiles(join(ROOT, "lib"), SOURCE);
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3] ?? "");
      if (!target) continue;
      const rel = relative(ROOT, target);
      if (/^(app|jobs)(\/|$)/.test(rel)) bad.push(`${relative(ROOT, file)} → ${rel}`);
      else if (rel.startsWith("lib/") && existsSync(target)) queue.push(target);
    }
    for (const pkg of ["next", "bullmq", "react", "next-auth"]) {
      if (new RegExp(`from\\s*["']${pkg}(/[^"']*)?["']`).test(readFileSync(file, "utf8"))) bad.push(`${relative(ROOT, file)} → ${pkg}`);
    }
  }
  return bad;
}

it("lib/ never imports app/ or jobs/, nor Next.js, React or BullMQ", () => {
  expect(forbiddenEdges()).toEqual([]);
});

/** lib/ folders that must not import these (each sits below them; what it needs from above is passed in). */
const DOWNWARD: Record<string, string[]> = {
  store: ["metering", "outbound", "config", "dashboard"],
  metering: ["dashboard"],
};

/** The imports of lib/ from one of its folders into a folder it must not import. */
function upwardEdges(): string[] {
  const up: string[] = [];
  for (const file of sourceFiles(join(ROOT, "lib"), SOURCE)) {
    const from = relative(ROOT, file);
    const folder = from.split("/")[1]!;
    const forbidden = DOWNWARD[folder];
    if (!forbidden) continue;
    for (const m of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3] ?? "");
      if (!target) continue;
      const rel = relative(ROOT, target);
      if (forbidden.some((f) => rel.startsWith(`lib/${f}/`))) up.push(`${from} → ${rel}`);
    }
  }
  return up.sort();
}

it("no import runs back up the house: the store imports neither metering, outbound, config nor the dashboard, metering not the dashboard", () => {
  expect(upwardEdges()).toEqual([]);
});
