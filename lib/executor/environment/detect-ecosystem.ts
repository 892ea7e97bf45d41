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
  /** The file whose presence says the checkout uses it (the first found wins among node's and python's). */
  marker: string;
  cache: string[];
  key: string[];
  /** Variables that put the tool's own cache inside a cached path. */
  env?: Record<string, string>;
}

const FACTS: Record<Ecosystem, EcosystemFacts> = {
  npm: { marker: "package-lock.json", cache: ["node_modules"], key: ["package-lock.json"] },
  pnpm: { marker: "pnpm-lock.yaml", cache: ["node_modules"], key: ["pnpm-lock.yaml"] },
  yarn: { marker: "yarn.lock", cache: ["node_modules"], key: ["yarn.lock"] },
  uv: { marker: "uv.lock", cache: [".venv"], key: ["uv.lock"] },
  poetry: { marker: "poetry.lock", cache: [".venv"], key: ["poetry.lock"], env: { POETRY_VIRTUALENVS_IN_PROJECT: "true" } },
  pip: { marker: "requirements.txt", cache: [".venv"], key: ["requirements.txt"] },
  cargo: { marker: "Cargo.lock", cache: ["~/.cargo/registry", "target"], key: ["Cargo.lock"] },
  go: { marker: "go.sum", cache: ["~/go/pkg/mod"], key: ["go.sum"] },
};

/** One ecosystem per family: a checkout with pnpm-lock.yaml and package-lock.json is npm's. */
const FAMILIES: Ecosystem[][] = [["npm", "pnpm", "yarn"], ["uv", "poetry", "pip"], ["cargo"], ["go"]];

/** The ecosystems of the checkout at `dir`, one per family at most. */
export function detectEcosystems(dir: string): Ecosystem[] {
  const found: Ecosystem[] = [];
  for (const family of FAMILIES) {
    const hit = family.find((e) => existsSync(join(dir, FACTS[e].marker)));
    if (hit) found.push(hit);
  }
  return found;
}

/** The cache paths, key files and variables of the ecosystems found, without repeats. */
export function ecosystemDefaults(ecosystems: readonly Ecosystem[]): { cache: string[]; key: string[]; env: Record<string, string> } {
  const cache = new Set<string>();
  const key = new Set<string>();
  const env: Record<string, string> = {};
  for (const e of ecosystems) {
    FACTS[e].cache.forEach((p) => cache.add(p));
    FACTS[e].key.forEach((k) => key.add(k));
    Object.assign(env, FACTS[e].env);
  }
  return { cache: [...cache], key: [...key], env };
}

/** The spec with `cache:` and `key:` filled from the checkout when it left them out. */
export function withDetectedPaths(spec: EnvironmentSpec, dir: string): EnvironmentSpec & { ecosystems: Ecosystem[] } {
  if (spec.cache && spec.key) return { ...spec, ecosystems: [] };
  const ecosystems = detectEcosystems(dir);
  const found = ecosystemDefaults(ecosystems);
  return { ...spec, cache: spec.cache ?? found.cache, key: spec.key ?? found.key, env: { ...found.env, ...spec.env }, ecosystems };
}
