import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { expect, it } from "vitest";
import { sourceFiles } from "./support/source-files";

const ROOT = resolve(__dirname, "../..");

/** A query sent, a pool or Prisma client reached into, pg imported, or the store's sql template used (ADR 0026). */
const TOUCHES_POSTGRES = /\.query\s*(<[^>]*>)?\s*\(|\.(pool|prisma)\b|\$(queryRaw|executeRaw)|from\s*["']pg["']|^import (?!type )[^;]*from\s*["'][^"']*store\/sql["']/m;


it("only lib/store writes SQL: the rest of lib/, app/ and jobs/ reach Postgres through store verbs", () => {
  const offending = ["lib", "app", "jobs"]
    .flatMap((dir) => sourceFiles(join(ROOT, dir)))
    .map((file) => relative(ROOT, file))
    .filter((file) => !file.startsWith("lib/store/"))
    .filter((file) => TOUCHES_POSTGRES.test(readFileSync(join(ROOT, file), "utf8")));
  expect(offending).toEqual([]);
});

/** A `$n` placeholder written by hand in a statement's text (not the `$` of a JavaScript template's `${`). */
const POSITIONAL = /\$\d+/;

it("no statement of the store counts positions: values are written where they are used, through the sql template (lib/store/kernel/sql.ts)", () => {
  const offending = sourceFiles(join(ROOT, "lib/store"))
    .map((file) => relative(ROOT, file))
    .filter((file) => !file.startsWith("lib/store/generated/") && file !== "lib/store/kernel/sql.ts")
    .flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        // a regular expression's replacement ("$1") is not SQL
        .filter(({ line }) => POSITIONAL.test(line) && !/\.replace\(/.test(line))
        .map(({ where }) => where),
    );
  expect(offending).toEqual([]);
});
