import { isClosed } from "../engine/run-predicates";
import type { RunStateName } from "../engine/run-state";
import { BadInputError } from "../errors";
import type { Db } from "../store/kernel/db";
import { readRunsPage } from "../store/reads/runs-page";

/**
 * The Runs list: the Runs of the repositories in scope, newest first, filtered by Loop, agent
 * and state and searched by Item title, Item number or Run id, a page at a time. Pages are
 * cut by a keyset cursor on (received_at, id) — the position of the last Run shown — so a
 * page deep in a big table costs what the first one does (index runs_repo_received_at_id_idx,
 * read backward per repository), and a Run that arrives meanwhile does not shift the pages
 * after it.
 */

export interface RunListFilter {
  loop?: string | null;
  agent?: string | null;
  state?: RunStateName | null;
  /** an Item number (`12`, `#12`), a Run id, or words of an Item's title */
  q?: string | null;
}

export interface RunRow {
  id: string;
  repo: string;
  loop: string;
  agent: string;
  number: number | null;
  title: string | null;
  state: RunStateName;
  /** In the terminal set (Succeeded, Failed, Canceled): no Attempt will happen without an operator. */
  closed: boolean;
  receivedAt: string;
  endedAt: string | null;
  pullRequestNumber: number | null;
}

export interface RunPage {
  runs: RunRow[];
  /** the cursor of the next page; null on the last one */
  next: string | null;
}

export const RUNS_PAGE_SIZE = 50;

/** The cursor after a Run: its received_at (to the microsecond Postgres keeps) and id, base64url. */
export function encodeCursor(receivedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([receivedAt, id])).toString("base64url");
}

/**
 * A received_at as the list writes it (UTC, to the microsecond) of a moment that exists:
 * Postgres refuses a 30 February or a year 0 with an error, so they are refused here first.
 */
function isCursorTime(text: string): boolean {
  if (!/^(?!0000)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/.test(text)) return false;
  const ms = Date.parse(text);
  // Date.parse rolls a day past the month's end into the next month: the round trip shows it
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === text.slice(0, 19);
}

/** A cursor this list wrote, or a 400 `invalid_cursor`. */
export function decodeCursor(cursor: string): { at: string; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === "string" &&
    isCursorTime(value[0]) &&
    typeof value[1] === "string" &&
    /^[\w.:-]{1,200}$/.test(value[1])
  ) {
    return { at: value[0], id: value[1] };
  }
  throw new BadInputError("invalid_cursor", "The cursor is not one this list gave: start again from the first page.");
}

/** What a search asks for: an Item number, a Run id (or its start), else words of a title. */
export function searchTerms(q: string | null | undefined): { number: number | null; idPrefix: string | null; title: string | null } {
  const text = (q ?? "").trim();
  if (!text) return { number: null, idPrefix: null, title: null };
  const number = /^#?\d{1,9}$/.test(text) ? Number(text.replace("#", "")) : null;
  const idPrefix = /^[0-9a-f]{6,32}$/i.test(text) ? text.toLowerCase() : null;
  return { number, idPrefix, title: text };
}

export async function loadRunPage(db: Db, repos: string[], filter: RunListFilter, page: { cursor?: string | null; limit?: number } = {}): Promise<RunPage> {
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  const limit = Math.min(200, Math.max(1, page.limit ?? RUNS_PAGE_SIZE));
  if (!repos.length) return { runs: [], next: null };
  const search = searchTerms(filter.q);
  const rows = await readRunsPage(db, {
    repos,
    loop: filter.loop ?? null,
    agent: filter.agent ?? null,
    state: filter.state ?? null,
    title: search.title,
    number: search.number,
    idPrefix: search.idPrefix,
    after,
    take: limit + 1,
  });
  const runs: RunRow[] = rows.slice(0, limit).map((r) => ({
    id: r.id,
    repo: r.repo,
    loop: r.loop,
    agent: r.agent,
    number: r.number,
    title: r.title,
    state: r.state,
    closed: isClosed(r.state),
    receivedAt: r.received_at,
    endedAt: r.ended_at?.toISOString() ?? null,
    pullRequestNumber: r.pull_request_number,
  }));
  const last = rows.length > limit ? runs.at(-1)! : null;
  return { runs, next: last ? encodeCursor(last.receivedAt, last.id) : null };
}
