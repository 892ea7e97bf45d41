import type { LoopConfigErrorToken } from "../config-schema";

/** What the validators of `.github/atelier.yml` (lib/loops/validate/) share. */

/** Where in the config a value is: keys and list indexes from the top. */
export type Path = (string | number)[];

/** Reports one problem of the config, on its Loop (null: on the file) at its path. */
export type Report = (loop: string | null, token: LoopConfigErrorToken, path: Path, message: string) => void;

/** Reports one problem of the Loop being validated, at a path within it. */
export type Problem = (token: LoopConfigErrorToken, path: Path, message: string) => void;

/** The repository a config is declared in, and the repositories of its installation. */
export interface ConfigTenant {
  /** owner/name of the declaring repository */
  repo: string;
  /** owner/name of every repository of the declaring repository's installation, lower-cased */
  installationRepos: readonly string[];
  /**
   * For each roster agent with an `allow:`, the repositories among those it lets use it, decided
   * by their GitHub ids (lib/auth/roster-allow.ts); an agent missing here serves none of them.
   */
  allowedRepos: Readonly<Record<string, ReadonlySet<string>>>;
}

/** The end of every sentence about a wrong `on:`: what may be written there. */
export const ON_HELP = 'write on: issues, on: pull_requests, on: comments, or on: { schedule: { cron: "0 6 * * 1-5", tz: Europe/Paris } }';

/** " (did you mean x?)" for a near miss among `known`, else "". */
export function suggest(word: string, known: readonly string[]): string {
  const norm = (s: string) => s.toLowerCase().replace(/-/g, "_");
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = norm(word) === norm(candidate) ? 0 : distance(norm(word), norm(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 4)) ? ` (did you mean ${best}?)` : "";
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length]!;
}

/** A YAML map (not a list, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
