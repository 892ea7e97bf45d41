import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ts from "typescript";

/**
 * Checks JSON from the simulator against @octokit/openapi-types at run time: the TypeScript
 * compiler reads `components["schemas"][name]` and the checker walks the value — every
 * required property present, every present property of the right shape (strings, numbers,
 * booleans, null, literals, arrays, nested objects, unions).
 */
export class SchemaChecker {
  private readonly checker: ts.TypeChecker;
  private readonly types = new Map<string, ts.Type>();

  constructor(names: string[]) {
    const require = createRequire(import.meta.url);
    const typesFile = require.resolve("@octokit/openapi-types/types.d.ts");
    const file = join(dirname(typesFile), "__schema_checker__.ts");
    const source =
      `import type { components } from "./types";\n` +
      names.map((n, i) => `export type T${i} = NonNullable<components["schemas"][${JSON.stringify(n)}]>;`).join("\n");
    const host = ts.createCompilerHost({ strict: true });
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : read(name, language, ...rest));
    host.fileExists = ((exists) => (name: string) => name === file || exists(name))(host.fileExists.bind(host));
    const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: [] }, host);
    this.checker = program.getTypeChecker();
    const sourceFile = program.getSourceFile(file);
    const module = sourceFile && this.checker.getSymbolAtLocation(sourceFile);
    if (!module) throw new Error("could not load @octokit/openapi-types");
    const exports = this.checker.getExportsOfModule(module);
    names.forEach((name, i) => {
      const symbol = exports.find((s) => s.name === `T${i}`);
      if (!symbol) throw new Error(`no schema ${name}`);
      this.types.set(name, this.checker.getDeclaredTypeOfSymbol(symbol));
    });
  }

  /** Required property names of a schema (top level). */
  requiredKeys(name: string): string[] {
    return this.checker
      .getPropertiesOfType(this.type(name))
      .filter((p) => !(p.flags & ts.SymbolFlags.Optional))
      .map((p) => p.name);
  }

  /** Problems of `value` against `components["schemas"][name]`; empty when it conforms. */
  check(value: unknown, name: string): string[] {
    const errors: string[] = [];
    this.walk(value, this.type(name), name, 0, errors);
    return errors;
  }

  private type(name: string): ts.Type {
    const type = this.types.get(name);
    if (!type) throw new Error(`schema ${name} was not loaded`);
    return type;
  }

  private walk(value: unknown, type: ts.Type, path: string, depth: number, errors: string[]): void {
    if (depth > 10) return;
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
    if (type.isUnion()) {
      let best: string[] | undefined;
      for (const member of type.types) {
        const attempt: string[] = [];
        this.walk(value, member, path, depth, attempt);
        if (attempt.length === 0) return;
        if (!best || attempt.length < best.length) best = attempt;
      }
      errors.push(...(best ?? [`${path}: matches no member of ${this.checker.typeToString(type)}`]));
      return;
    }
    const fail = (what: string): void => {
      errors.push(`${path}: expected ${what}, got ${JSON.stringify(value)?.slice(0, 80)}`);
    };
    if (f & ts.TypeFlags.Null) return value === null ? undefined : fail("null");
    if (f & ts.TypeFlags.Undefined) return value === undefined ? undefined : fail("undefined");
    if (f & ts.TypeFlags.StringLiteral) return value === (type as ts.StringLiteralType).value ? undefined : fail(JSON.stringify((type as ts.StringLiteralType).value));
    if (f & ts.TypeFlags.String) return typeof value === "string" ? undefined : fail("a string");
    if (f & ts.TypeFlags.NumberLiteral) return value === (type as ts.NumberLiteralType).value ? undefined : fail(String((type as ts.NumberLiteralType).value));
    if (f & (ts.TypeFlags.Number | ts.TypeFlags.BigInt)) return typeof value === "number" ? undefined : fail("a number");
    if (f & ts.TypeFlags.BooleanLiteral) return String(value) === this.checker.typeToString(type) ? undefined : fail(this.checker.typeToString(type));
    if (f & ts.TypeFlags.Boolean) return typeof value === "boolean" ? undefined : fail("a boolean");
    if (this.checker.isArrayType(type)) {
      if (!Array.isArray(value)) return fail("an array");
      const element = this.checker.getTypeArguments(type as ts.TypeReference)[0];
      if (element) value.forEach((v, i) => this.walk(v, element, `${path}[${i}]`, depth + 1, errors));
      return;
    }
    if (f & ts.TypeFlags.Object) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("an object");
      const record = value as Record<string, unknown>;
      for (const prop of this.checker.getPropertiesOfType(type)) {
        const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
        if (!(prop.name in record)) {
          if (!optional) errors.push(`${path}.${prop.name}: required, missing`);
          continue;
        }
        if (record[prop.name] === undefined) continue;
        const propType = this.checker.getNonNullableType(this.checker.getTypeOfSymbol(prop));
        const declared = this.checker.getTypeOfSymbol(prop);
        this.walk(record[prop.name], record[prop.name] === null ? declared : propType, `${path}.${prop.name}`, depth + 1, errors);
      }
    }
  }
}
