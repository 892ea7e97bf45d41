import type { Ecosystem } from "./detect-ecosystem";

/**
 * The hosts setup may reach: the instance's registry allowlist (`registries:` in
 * atelier.config.yml). A repository never adds one; the default is the public package
 * registries of the ecosystems Atelier detects.
 */

export const PUBLIC_REGISTRIES: Readonly<Record<Ecosystem, readonly string[]>> = Object.freeze({
  npm: ["registry.npmjs.org"],
  pnpm: ["registry.npmjs.org"],
  yarn: ["registry.yarnpkg.com", "registry.npmjs.org", "repo.yarnpkg.com"],
  pip: ["pypi.org", "files.pythonhosted.org"],
  uv: ["pypi.org", "files.pythonhosted.org"],
  poetry: ["pypi.org", "files.pythonhosted.org"],
  cargo: ["index.crates.io", "static.crates.io", "crates.io"],
  go: ["proxy.golang.org", "sum.golang.org"],
});

/** Every public registry, once: the allowlist when the instance's config says nothing. */
export const DEFAULT_REGISTRIES: readonly string[] = Object.freeze([...new Set(Object.values(PUBLIC_REGISTRIES).flat())]);

/** The word that stands for DEFAULT_REGISTRIES in `registries:` (an admin extends the default with it). */
export const DEFAULT_REGISTRIES_WORD = "default";

/** `registries:` as written, with `default` replaced by the public registries. */
export function expandRegistries(entries: readonly string[]): string[] {
  return [...new Set(entries.flatMap((e) => (e === DEFAULT_REGISTRIES_WORD ? DEFAULT_REGISTRIES : [e.toLowerCase()])))];
}
