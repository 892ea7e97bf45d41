import type pg from "pg";

/**
 * The store's hand-written SQL, with each value written where it is used:
 *
 *   await rows<RunRow>(db.pool, sql`SELECT * FROM runs WHERE id = ${runId} AND state = ${state}`)
 *
 * sends `… id = $1 AND state = $2` with `[runId, state]`, so no statement counts positions. A
 * value that is itself a `Statement` (another sql`…`, or `raw(…)` for text known when the code
 * is written: a column list, a state list from lib/engine) is inlined, its own values numbered
 * after those before it. Nothing else is ever pasted into the text.
 */
export class Statement {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Statement {
  return new Statement(strings, values);
}

/** SQL text known when the code is written (never a value from a request, a webhook or an agent). */
export function raw(text: string): Statement {
  return new Statement([text], []);
}

/** A string literal of text known when the code is written (a state from lib/engine, a key prefix), quoted. */
export function literal(text: string): Statement {
  return raw(`'${text.replace(/'/g, "''")}'`);
}

/** Joins statements with a separator, as in `sql\`… WHERE ${join(conditions, " AND ")}\``. */
export function join(parts: readonly Statement[], separator: string): Statement {
  const strings: string[] = [""];
  const values: unknown[] = [];
  parts.forEach((part, i) => {
    if (i > 0) strings[strings.length - 1] += separator;
    strings.push("");
    values.push(part);
  });
  return new Statement(strings, values);
}

/** The text with `$n` placeholders and the values they stand for. */
export function compile(statement: Statement): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const write = (s: Statement): string => {
    let text = s.strings[0]!;
    s.values.forEach((value, i) => {
      if (value instanceof Statement) text += write(value);
      else {
        values.push(value);
        text += `$${values.length}`;
      }
      text += s.strings[i + 1]!;
    });
    return text;
  };
  return { text: write(statement), values };
}

/** A pool or a transaction's client. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(on: Queryable, statement: Statement): Promise<pg.QueryResult<R>> {
  const { text, values } = compile(statement);
  return (on as pg.Pool).query<R>(text, values);
}

export async function rows<R extends pg.QueryResultRow = pg.QueryResultRow>(on: Queryable, statement: Statement): Promise<R[]> {
  return (await query<R>(on, statement)).rows;
}

/**
 * The statement sent as the named prepared statement `name`: its text must be the same on
 * every call (only its values vary), so each connection plans it once. For the hot paths,
 * where planning anew cost as long as running.
 */
export async function prepared<R extends pg.QueryResultRow = pg.QueryResultRow>(on: Queryable, name: string, statement: Statement): Promise<pg.QueryResult<R>> {
  return (on as pg.Pool).query<R>({ name, ...compile(statement) });
}

/** The first row of a prepared statement (`prepared`), or undefined when there is none. */
export async function firstPrepared<R extends pg.QueryResultRow = pg.QueryResultRow>(on: Queryable, name: string, statement: Statement): Promise<R | undefined> {
  return (await prepared<R>(on, name, statement)).rows[0];
}

/** The first row, or undefined when there is none. */
export async function first<R extends pg.QueryResultRow = pg.QueryResultRow>(on: Queryable, statement: Statement): Promise<R | undefined> {
  return (await query<R>(on, statement)).rows[0];
}
