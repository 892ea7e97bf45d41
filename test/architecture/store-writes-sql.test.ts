import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { expect, it } from "vitest";

const ROOT = resolve(__dirname, "../..");

/** The lib/ folders whose SQL has moved into lib/store (issue 20): each reaches Postgres only through store verbs. */
const WITHOUT_SQL = ["triggers", "github"];

/** A query sent, a pool or Prisma client reached into, or pg imported. */
const TOUCHES_POSTGRES = /\.query\s*(<[^>]*>)?\s*\(|\.(pool|prisma)\b|from\s*["']pg["']/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

it("only lib/store writes SQL: the folders moved to store verbs send no statement of their own", () => {
  const offending = WITHOUT_SQL.flatMap((folder) => sourceFiles(join(ROOT, "lib", folder)))
    .filter((file) => TOUCHES_POSTGRES.test(readFileSync(file, "utf8")))
    .map((file) => relative(ROOT, file));
  expect(offending).toEqual([]);
});
