import { BadInputError, NotFoundError } from "../errors";

/**
 * The one validator of the ids a client puts in a URL (every /api/v1 route and the pages take
 * theirs from here): checked for shape before anything is asked of the store, so that a NUL
 * byte, an overlong or a wrong-shaped id is a 400 or a 404 with a token, never a Postgres
 * error turned 500.
 */

/** Atelier makes 32 hex digits (lib/engine/ids.ts); anything of this alphabet and length is looked up, nothing else. */
const RUN_ID = /^[0-9A-Za-z_-]{1,64}$/;
const DIGITS = /^[1-9][0-9]{0,15}$/;
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,38})$/;
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** What an id in a message may show of itself: printable, short. */
export const shown = (text: string): string => {
  const printable = text.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 60 ? `${printable.slice(0, 60)}…` : printable;
};

/**
 * A Run's id (letters, digits, '-' and '_', at most 64). Any other text is answered as an
 * unknown Run is: 404 `run_not_found` — a Run id says nothing about whether it exists.
 */
export function runIdParam(text: unknown): string {
  const id = typeof text === "string" ? text : "";
  if (!RUN_ID.test(id)) throw new NotFoundError("run_not_found", `No Run ${shown(String(text))}.`);
  return id;
}

export type NumericIdKind = "webhook" | "delivery" | "installation";

/** A numeric id (a webhook, a delivery, an installation): a positive whole number that fits Postgres's bigint and JavaScript's safe integers. */
export function numericIdParam(text: unknown, what: NumericIdKind): number {
  const raw = typeof text === "number" ? String(text) : typeof text === "string" ? text : "";
  const id = DIGITS.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) throw new BadInputError("invalid_id", `"${shown(raw)}" is not ${what === "installation" ? "an" : "a"} ${what} id.`);
  return id;
}

/** A repository from two URL segments (owner, name), each percent-decoded at most once; lower-cased owner/name. */
export function repoParam(owner: unknown, name: unknown): string {
  const o = decoded(owner);
  const n = decoded(name);
  if (o === null || n === null || !OWNER.test(o) || !NAME.test(n) || n === "." || n === "..") {
    throw new BadInputError("invalid_repository", `"${shown(`${String(owner)}/${String(name)}`)}" is not a repository (owner/name).`);
  }
  return `${o}/${n}`.toLowerCase();
}

/** A text percent-decoded once, or null when it is not a string or its percent-encoding is broken (`%E0%A4%A`). */
export function decoded(text: unknown): string | null {
  if (typeof text !== "string") return null;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * Any text a client sent (a route segment, a query value, a string in a JSON body): Postgres
 * stores no NUL, so a text with one is refused wherever it would go.
 */
export const hasNul = (text: string): boolean => text.includes("\u0000");

/** The first path in a JSON value whose string (or key) holds a NUL, or null; walks iteratively, so depth costs no stack. */
export function nulPath(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (hasNul(v)) return path || "(body)";
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      for (const [k, inner] of Object.entries(v)) {
        if (hasNul(k)) return path || "(body)";
        stack.push([inner, path ? `${path}.${k}` : k]);
      }
    }
  }
  return null;
}
