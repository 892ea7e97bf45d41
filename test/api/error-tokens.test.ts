import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ERROR_STATUS, type ErrorToken, type TokenOf } from "../../lib/error-tokens";
import {
  AtelierError,
  BadInputError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaError,
  RateLimitError,
  toHttpError,
  UnauthorizedError,
  UnavailableError,
} from "../../lib/errors";

/** The error tokens are a closed type, each with one status, and docs/openapi.yaml lists exactly them. */

const ROOT = resolve(__dirname, "../..");
const ERROR_TOKENS = Object.keys(ERROR_STATUS) as ErrorToken[];

describe("error tokens", () => {
  it("are exactly the tokens docs/openapi.yaml lists for an error body", () => {
    const spec = parse(readFileSync(join(ROOT, "docs/openapi.yaml"), "utf8")) as { components: { schemas: { Error: { properties: { error: { enum: string[] } } } } } };
    expect([...spec.components.schemas.Error.properties.error.enum].sort()).toEqual([...ERROR_TOKENS].sort());
  });

  it("answer each with its one status, whichever error class carries it", () => {
    // one class per status: a token given to another class's constructor does not compile (below)
    const make: Record<number, (t: ErrorToken) => AtelierError> = {
      400: (t) => new BadInputError(t as TokenOf<400>, "m"),
      401: (t) => new UnauthorizedError(t as TokenOf<401>, "m"),
      402: (t) => new QuotaError(t as TokenOf<402>, "m"),
      403: (t) => new ForbiddenError(t as TokenOf<403>, "m"),
      404: (t) => new NotFoundError(t as TokenOf<404>, "m"),
      409: (t) => new ConflictError(t as TokenOf<409>, "m"),
      413: (t) => new PayloadTooLargeError(t as TokenOf<413>, "m"),
      429: (t) => new RateLimitError(t as TokenOf<429>, "m", 1),
      503: (t) => new UnavailableError(t as TokenOf<503>, "m", 1),
    };
    for (const token of ERROR_TOKENS) {
      const err = (make[ERROR_STATUS[token]] ?? ((t: ErrorToken) => new AtelierError(t, "m")))(token);
      const answer = toHttpError(err);
      expect([answer.status, answer.body.error], token).toEqual([ERROR_STATUS[token], token]);
    }
  });

  it("do not compile when misspelt or given to the class of another status", () => {
    const wrong = [
      // @ts-expect-error a typo is no token
      () => new NotFoundError("run_not_fuond", "m"),
      // @ts-expect-error invalid_body is a 400, not a 404
      () => new NotFoundError("invalid_body", "m"),
      // @ts-expect-error run_not_found is a 404, not a 409
      () => new ConflictError("run_not_found", "m"),
      // @ts-expect-error no token outside the list, even on the base class
      () => new AtelierError("something_else", "m"),
    ];
    // at run time a bad token still maps to no status: the type is what refuses it
    expect(wrong.map((f) => f().status)).toEqual([undefined, 400, 404, undefined]);
  });
});
