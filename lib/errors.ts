/**
 * One error dialect: every refusal is an AtelierError with a stable token, a sentence for
 * people and the HTTP status that fits. The edge (route handlers) maps it once with
 * `toHttpError`; nothing else in the product chooses a status.
 */
export class AtelierError extends Error {
  constructor(
    readonly token: string,
    message: string,
    readonly status: number,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the input is malformed or not allowed. Nothing was written. */
export class BadInputError extends AtelierError {
  constructor(token: string, message: string, details?: Record<string, unknown>) {
    super(token, message, 400, details);
  }
}

/** 401: nobody is signed in, or the signature/credential is wrong. */
export class UnauthorizedError extends AtelierError {
  constructor(token: string, message: string) {
    super(token, message, 401);
  }
}

/** 403: signed in, but not allowed to do this here. */
export class ForbiddenError extends AtelierError {
  constructor(token: string, message: string, details?: Record<string, unknown>) {
    super(token, message, 403, details);
  }
}

/** 404: no such thing (or not visible to this caller). */
export class NotFoundError extends AtelierError {
  constructor(token: string, message: string) {
    super(token, message, 404);
  }
}

/** 409: the thing is not in a state that allows this; a lost race lands here too. */
export class ConflictError extends AtelierError {
  constructor(token: string, message: string, details?: Record<string, unknown>) {
    super(token, message, 409, details);
  }
}

/** 402: a monthly quota or cost cap says no until `reset_at`. */
export class QuotaError extends AtelierError {
  constructor(token: string, message: string, details?: Record<string, unknown>) {
    super(token, message, 402, details);
  }
}

/** 429: too many, too fast; try again after `retryAfterSeconds`. */
export class RateLimitError extends AtelierError {
  constructor(
    token: string,
    message: string,
    readonly retryAfterSeconds: number,
    details?: Record<string, unknown>,
  ) {
    super(token, message, 429, details);
  }
}

/** 413: the body is larger than this endpoint takes; it was not read past the limit. */
export class PayloadTooLargeError extends AtelierError {
  constructor(token: string, message: string, details?: Record<string, unknown>) {
    super(token, message, 413, details);
  }
}

/**
 * 503: something Atelier depends on (Postgres, Redis) cannot be reached; nothing was done, and
 * the same request may be sent again after `retryAfterSeconds`.
 */
export class UnavailableError extends AtelierError {
  constructor(
    token: string,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(token, message, 503);
  }
}

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  body: { error: string; message: string } & Record<string, unknown>;
}

/** Maps any thrown value to the HTTP answer; unknown errors become a 500 that leaks nothing. */
export function toHttpError(err: unknown): HttpError {
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
