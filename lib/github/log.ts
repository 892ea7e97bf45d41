import { pino, type Logger } from "pino";

/** The structured logger of the GitHub layer and the triggers (pino). */
export type Log = Logger;

/**
 * A logger that never prints a credential: tokens, JWTs, secrets and Authorization headers are
 * redacted wherever they appear in a logged object. LOG_LEVEL sets the level (default info).
 */
export function createLog(name: string, level: string = process.env.LOG_LEVEL ?? "info"): Log {
  return pino({
    name,
    level,
    redact: {
      paths: [
        "token",
        "*.token",
        "jwt",
        "secret",
        "*.secret",
        "privateKey",
        "*.privateKey",
        "authorization",
        "headers.authorization",
        "*.headers.authorization",
        "request.headers.authorization",
      ],
      censor: "[redacted]",
    },
  });
}

/** A logger that prints nothing (tests, benchmarks). */
export const silentLog: Log = pino({ level: "silent" });
