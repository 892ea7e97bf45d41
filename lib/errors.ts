import { ERROR_STATUS, type ErrorStatus, type ErrorToken, type TokenOf } from "./error-tokens";

/**
 * One error dialect: every refusal is an AtelierError with a stable token (a member of the
 * closed `ErrorToken`), a sentence for people, and the HTTP status its token is answered with
 * (lib/error-tokens.ts). The edge (route handlers) maps it once with `toHttpError`; nothing
 * else in the product chooses a status.
 */
export class AtelierError extends Error {
  readonly status: ErrorStatus;
  constructor(
    readonly token: ErrorToken,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.status = ERROR_STATUS[token];
  }
}

/** An AtelierError whose token is one of those answered with status `S`. */
abstract class StatusError<S extends ErrorStatus> extends AtelierError {
  declare readonly token: TokenOf<S>;
  constructor(token: TokenOf<S>, message: string, details?: Record<string, unknown>) {
    super(token, message, details);
  }
}

/** 400: the input is malformed or not allowed. Nothing was written. */
export class BadInputError extends StatusError<400> {}

/** 401: nobody is signed in, or the signature/credential is wrong. */
export class UnauthorizedError extends StatusError<401> {}

/** 403: signed in, but not allowed to do this here. */
export class ForbiddenError extends StatusError<403> {}

/** 404: no such thing (or not visible to this caller). */
export class NotFoundError extends StatusError<404> {}

/** 409: the thing is not in a state that allows this; a lost race lands here too. */
export class ConflictError extends StatusError<409> {}

/** 402: a monthly quota or cost cap says no until `reset_at`. */
export class QuotaError extends StatusError<402> {}

/** 413: the body is larger than this endpoint takes; it was not read past the limit. */
export class PayloadTooLargeError extends StatusError<413> {}

/** 429: too many, too fast; try again after `retryAfterSeconds`. */
export class RateLimitError extends StatusError<429> {
  constructor(
    token: TokenOf<429>,
    message: string,
    readonly retryAfterSeconds: number,
    details?: Record<string, unknown>,
  ) {
    super(token, message, details);
  }
}

/**
 * 503: something Atelier depends on (Postgres, Redis) cannot be reached; nothing was done, and
 * the same request may be sent again after `retryAfterSeconds`.
 */
export class UnavailableError extends StatusError<503> {
  constructor(
    token: TokenOf<503>,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(token, message);
  }
}

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  body: { error: ErrorToken; message: string } & Record<string, unknown>;
}

/** Seconds a client is told to wait when Postgres or Redis cannot be reached. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

const NET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ECONNABORTED"]);
/**
 * Postgres's own codes for "not now": connection exceptions (08…), shutting down or starting
 * (57P0x), too many connections, and no such database (3D000: dropped, or not created yet).
 */
const PG_OUTAGE = /^(08...|57P0[123]|53300|3D000)$/;
const PRISMA_OUTAGE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const ADAPTER_OUTAGE = new Set(["DatabaseNotReachable", "DatabaseUnavailable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
const PG_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;
const REDIS_MESSAGES = /^(Stream isn't writeable|Connection is closed|Reached the max retries per request limit|.*enableOfflineQueue)/;

const portOf = (url: string, fallback: number): number => {
  try {
    return Number(new URL(url).port || fallback);
  } catch {
    return fallback;
  }
};

/**
 * Which dependency a thrown value says is unreachable — "database" (pg, Prisma's adapter) or
 * "queue" (ioredis, BullMQ) — or null when it is no outage. A bare socket error (ECONNREFUSED…)
 * is told apart by the port it was for. Looks through `cause` and AggregateError's errors.
 */
export function outageOf(err: unknown, env: NodeJS.ProcessEnv = process.env): "database" | "queue" | null {
  const dbPort = portOf(env.DATABASE_URL || "postgresql://127.0.0.1:5432", 5432);
  const redisPort = portOf(env.REDIS_URL || "redis://127.0.0.1:6379", 6379);
  const seen = new Set<unknown>();
  const walk = (e: unknown, depth: number): "database" | "queue" | null => {
    if (depth > 5 || e === null || typeof e !== "object" || seen.has(e)) return null;
    seen.add(e);
    const x = e as { code?: unknown; severity?: unknown; name?: unknown; message?: unknown; port?: unknown; meta?: unknown; cause?: unknown; errors?: unknown };
    const code = typeof x.code === "string" ? x.code : "";
    const message = typeof x.message === "string" ? x.message : "";
    if (typeof x.severity === "string" && PG_OUTAGE.test(code)) return "database";
    if (PRISMA_OUTAGE.has(code)) return "database";
    const adapter = (x.meta as { driverAdapterError?: { cause?: { kind?: unknown } } } | undefined)?.driverAdapterError?.cause?.kind;
    if (typeof adapter === "string" && ADAPTER_OUTAGE.has(adapter)) return "database";
    if (PG_MESSAGES.test(message)) return "database";
    if (x.name === "MaxRetriesPerRequestError" || REDIS_MESSAGES.test(message)) return "queue";
    if (NET_CODES.has(code) && typeof x.port === "number") {
      if (x.port === dbPort) return "database";
      if (x.port === redisPort) return "queue";
    }
    for (const inner of [x.cause, ...(Array.isArray(x.errors) ? x.errors : [])]) {
      const found = walk(inner, depth + 1);
      if (found) return found;
    }
    return null;
  };
  return walk(err, 0);
}

/** The 503 an outage is answered with: `database_unavailable` or `queue_unavailable`, with Retry-After. */
export function outageError(kind: "database" | "queue"): UnavailableError {
  return kind === "database"
    ? new UnavailableError("database_unavailable", "Atelier cannot reach its database (Postgres) right now; nothing was done. Try again shortly.", OUTAGE_RETRY_AFTER_SECONDS)
    : new UnavailableError("queue_unavailable", "Atelier cannot reach its job queue (Redis) right now; nothing was done. Try again shortly.", OUTAGE_RETRY_AFTER_SECONDS);
}

/**
 * Maps any thrown value to the HTTP answer: an AtelierError as it says, an outage of Postgres
 * or Redis as a 503 with its token and Retry-After; anything else becomes a 500 that leaks
 * nothing.
 */
export function toHttpError(err: unknown): HttpError {
  const outage = err instanceof AtelierError ? null : outageOf(err);
  if (outage) err = outageError(outage);
  if (err instanceof AtelierError) {
    const headers: Record<string, string> = {};
    if (err instanceof RateLimitError || err instanceof UnavailableError) headers["retry-after"] = String(err.retryAfterSeconds);
    return { status: err.status, headers, body: { error: err.token, message: err.message, ...err.details } };
  }
  return {
    status: 500,
    headers: {},
    body: { error: "internal", message: "Something went wrong inside Atelier; the server log has the details." },
  };
}
