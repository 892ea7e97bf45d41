import { basename, join, relative, resolve } from "node:path";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importCircles, importsAgainstLayers, libImports } from "./support/import-graph";
import { sourceFiles } from "./support/source-files";

const ROOT = resolve(__dirname, "../..");
const FIXTURES = join(__dirname, "fixtures");

/**
 * The layer order of lib/, lowest first: a part of lib/ (a folder, or "(root)" for its loose
 * files) imports only parts of lower layers. The parts of one layer do not import each other.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["(root)"], // errors and their tokens
  ["http"], // what crosses the network: ids, bodies, headers, address classes
  ["engine"], // the Run's states, the claim decision, retries: pure
  ["metrics"], // the process's counters
  ["secrets"], // the instance key, sealed boxes, redaction
  ["executor"], // an Attempt: its sandbox, the agent, the harvest
  ["config"], // the instance's config: the roster, Redis
  ["loops"], // a repository's config: Loops, expressions, projections, prompts
  ["work"], // what the product asks of the job system
  ["store"], // Postgres: one room per aggregate
  ["github"], // GitHub: the App, its reads and webhooks
  ["auth"], // who is asking: sessions, viewers, what they may see
  ["metering", "outbound", "retention"], // the admission gate; webhooks Atelier sends; pruning old history
  ["setup", "runner", "triggers"], // registering the App; moving Runs; polling, Hints and schedules
  ["mirror", "dashboard", "health", "supervisor", "sandbox"], // what people and processes see; the simulator
  ["notify"], // notices for the targets, the dashboard issue on GitHub
  ["instance"], // one wiring of every process
];

describe("the layers of lib/", () => {
  it("lib/ never imports app/ or jobs/, nor Next.js, React or BullMQ", () => {
    const bad = libImports(ROOT)
      .filter(({ to }) => /^(app|jobs)(\/|$)/.test(to))
      .map(({ from, to }) => `${from} → ${to}`);
    for (const file of sourceFiles(join(ROOT, "lib"), /\.(ts|tsx|mts|mjs)$/)) {
      for (const pkg of ["next", "bullmq", "react", "next-auth"]) {
        if (new RegExp(`from\\s*["']${pkg}(/[^"']*)?["']`).test(readFileSync(file, "utf8"))) bad.push(`${relative(ROOT, file)} → ${pkg}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("every import goes down the layer order, and every part of lib/ has its layer", () => {
    expect(importsAgainstLayers(ROOT, LAYERS)).toEqual([]);
  });

  it("has no circle of imports", () => {
    expect(importCircles(ROOT)).toEqual([]);
  });

  it("is checked: an import that runs up, and a circle, are found (fixtures)", () => {
    expect(importsAgainstLayers(join(FIXTURES, "upward"), [["low"], ["high"]])).toEqual(["lib/low/base.ts → lib/high/top.ts"]);
    expect(importsAgainstLayers(join(FIXTURES, "upward"), [["high"], ["low"]])).toEqual([]);
    expect(importCircles(join(FIXTURES, "circle"))).toEqual([["lib/loop/a.ts", "lib/loop/b.ts"]]);
  });

  it("no two files of lib/ share a name, but the simulator's state, routes and rendering of one GitHub resource", () => {
    const byName = new Map<string, string[]>();
    for (const file of sourceFiles(join(ROOT, "lib"))) {
      const rel = relative(ROOT, file);
      const name = basename(rel);
      if (name === "index.ts" || /^lib\/sandbox\/(state|routes|render)\//.test(rel)) continue;
      byName.set(name, [...(byName.get(name) ?? []), rel]);
    }
    expect([...byName.values()].filter((paths) => paths.length > 1)).toEqual([]);
  });
});
