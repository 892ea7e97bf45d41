import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect, it } from "vitest";
import { sourceFiles } from "./support/source-files";

// Each process (the worker, the web process's services and webhook route) once assembled its
// own deps, and the check-run path got no quota gate. Now lib/instance/wiring.ts is the one
// place that builds the gate, the trigger deps and the App: a process that built its own
// would import one of these, and this test names it.
const ROOT = resolve(__dirname, "../..");
const WIRING = "lib/instance/wiring.ts";

/** What only the wiring may import: from which module, which names. */
const BUILDERS: Record<string, string[]> = {
  "lib/metering/admission.ts": ["admission"],
  "lib/triggers/deps.ts": ["createTriggerDeps"],
  "lib/github/app-client.ts": ["createGitHubApp"],
};

const NAMED_IMPORT = /import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g;


/** `file → module: name` for each import of a builder in the text of `from` (a path from the root). */
function builderImports(from: string, text: string): string[] {
  if (from === WIRING) return [];
  const found: string[] = [];
  for (const m of text.matchAll(NAMED_IMPORT)) {
    const spec = m[2]!;
    if (!spec.startsWith(".")) continue;
    const target = relative(ROOT, resolve(ROOT, dirname(from), spec)).replace(/(\.ts)?$/, ".ts");
    const forbidden = BUILDERS[target];
    if (!forbidden || target === from) continue;
    const names = m[1]!.split(",").map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!);
    for (const name of names) if (forbidden.includes(name)) found.push(`${from} → ${target}: ${name}`);
  }
  return found;
}

it("only lib/instance/wiring.ts builds the admission gate, the trigger deps and the GitHub App (app/, jobs/, lib/)", () => {
  const files = ["app", "jobs", "lib"].flatMap((d) => sourceFiles(join(ROOT, d)));
  expect(files.flatMap((file) => builderImports(relative(ROOT, file), readFileSync(file, "utf8"))).sort()).toEqual([]);
});

it("the check names a process that builds its own gate and trigger deps, as the worker once did", () => {
  const before = `import { admission } from "../lib/metering/admission";\nimport { createTriggerDeps, type TriggerDeps } from "../lib/triggers/deps";\n`;
  expect(builderImports("jobs/worker.ts", before)).toEqual([
    "jobs/worker.ts → lib/metering/admission.ts: admission",
    "jobs/worker.ts → lib/triggers/deps.ts: createTriggerDeps",
  ]);
  expect(builderImports(WIRING, before.replaceAll("../lib/", "../"))).toEqual([]);
});
