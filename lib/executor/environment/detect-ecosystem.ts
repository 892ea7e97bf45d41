import { existsSync } from "node:fs";
import { join } from "node:path";
import type { EnvironmentSpec } from "./environment-spec";

/**
 * The ecosystems a checkout uses, read from its lock files: what their setup fills (the cache
 * paths) and which files key it. Used for `cache:` and `key:` when `environment:` leaves them out.
 */

export const ECOSYSTEMS = ["npm", "pnpm", "yarn", "uv", "poetry", "pip", "cargo", "go"] as const;
export type Ecosystem = (typeof ECOSYSTEMS)[number];

interface EcosystemFacts {
  ecosystem: Ecosystem;
  /** The file whose presence says the checkout uses it (the first found of its family wins). */
  marker: string;
  cache: string[];
  key: string[];
  /** Variables that put the tool's own cache inside a cached path. */
  env?: Record<string, string>;
}

/** Each family's candidates, most specific first: a lock file before a bare manifest. */
const FAMILIES: EcosystemFacts[][] = [
  [
    { ecosystem: "npm", marker: "package-lock.json", cache: ["node_modules"], key: ["package-lock.json"] },
    { ecosystem: "pnpm", marker: "pnpm-lock.yaml", cache: ["node_modules"], key: ["pnpm-lock.yaml"] },
    { ecosystem: "yarn", marker: "yarn.lock", cache: ["node_modules"], key: ["yarn.lock"] },
    { ecosystem: "npm", marker: "package.json", cache: ["node_modules"], key: ["package.json"] },
  ],
  [
    { ecosystem: "uv", marker: "uv.lock", cache: [".venv"], key: ["uv.lock"] },
    { ecosystem: "poetry", marker: "poetry.lock", cache: [".venv"], key: ["poetry.lock"], env: { POETRY_VIRTUALENVS_IN_PROJECT: "true" } },
    { ecosystem: "pip", marker: "requirements.txt", cache: [".venv"], key: ["requirements.txt"] },
  ],
  [{ ecosystem: "cargo", marker: "Cargo.lock", cache: ["~/.cargo/registry", "target"], key: ["Cargo.lock"] }],
  [{ ecosystem: "go", marker: "go.sum", cache: ["~/go/pkg/mod"], key: ["go.sum"] }],
];

/** What the checkout at `dir` uses: one candidate per family at most. */
function detect(dir: string): EcosystemFacts[] {
  return FAMILIES.map((family) => family.find((f) => existsSync(join(dir, f.marker)))).filter((f): f is EcosystemFacts => f !== undefined);
}

/** The ecosystems of the checkout at `dir`, one per family at most. */
export function detectEcosystems(dir: string): Ecosystem[] {
  return detect(dir).map((f) => f.ecosystem);
}

/** The cache paths, key files and variables of what was found, without repeats. */
function defaults(found: readonly EcosystemFacts[]): { cache: string[]; key: string[]; env: Record<string, string> } {
  const env: Record<string, string> = {};
  for (const f of found) Object.assign(env, f.env);
  return { cache: [...new Set(found.flatMap((f) => f.cache))], key: [...new Set(found.flatMap((f) => f.key))], env };
}

/** The spec with `cache:` and `key:` filled from the checkout when it left them out. */
export function withDetectedPaths(spec: EnvironmentSpec, dir: string): EnvironmentSpec & { ecosystems: Ecosystem[] } {
  if (spec.cache && spec.key) return { ...spec, ecosystems: [] };
  const facts = detect(dir);
  const found = defaults(facts);
  return { ...spec, cache: spec.cache ?? found.cache, key: spec.key ?? found.key, env: { ...found.env, ...spec.env }, ecosystems: facts.map((f) => f.ecosystem) };
}
