import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/** Every route under app/api/v1, with every method it exports, is described in docs/openapi.yaml (and nothing else is). */

const ROOT = resolve(__dirname, "../..");
const API = join(ROOT, "app/api/v1");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? routeFiles(join(dir, e.name)) : e.name === "route.ts" ? [join(dir, e.name)] : []));
}

/** "runs/[id]/approve/route.ts" → "/runs/{id}/approve", with the methods the file exports. */
function routes(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of routeFiles(API)) {
    const path = "/" + relative(API, file).split(sep).slice(0, -1).map((s) => s.replace(/^\[(.+)\]$/, "{$1}")).join("/");
    const source = readFileSync(file, "utf8");
    out.set(path, METHODS.filter((m) => new RegExp(`export (const|async function|function) ${m}\\b`).test(source)).map((m) => m.toLowerCase()));
  }
  return out;
}

describe("docs/openapi.yaml", () => {
  const spec = parse(readFileSync(join(ROOT, "docs/openapi.yaml"), "utf8")) as { openapi: string; paths: Record<string, Record<string, unknown>> };
  const described = new Map(Object.entries(spec.paths).map(([p, ops]) => [p, Object.keys(ops).filter((k) => (METHODS as readonly string[]).includes(k.toUpperCase())).sort()]));

  it("is OpenAPI 3.1", () => expect(spec.openapi).toBe("3.1.0"));

  it("describes every route of app/api/v1 with exactly the methods it answers", () => {
    const actual = new Map([...routes()].map(([p, m]) => [p, [...m].sort()]));
    expect(Object.fromEntries(described)).toEqual(Object.fromEntries(actual));
  });

  it("gives every operation a summary and its responses", () => {
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!(METHODS as readonly string[]).includes(method.toUpperCase())) continue;
        const o = op as { summary?: string; responses?: object };
        expect(o.summary, `${method} ${path}`).toBeTruthy();
        expect(Object.keys(o.responses ?? {}).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });
});
