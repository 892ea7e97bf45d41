import { readFileSync } from "node:fs";
import { resolve } from "node:path";

/** Atelier's version, from package.json (the Workers page, /readyz, the metrics). */
export function atelierVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(resolve(process.cwd(), "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}
