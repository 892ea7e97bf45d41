import { pino, type DestinationStream, type Logger } from "pino";
import { instanceSecretValues, Redactor } from "../secrets/redact";

/** The structured logger of every process (pino): the GitHub layer, the triggers, the runner. */
export type Log = Logger;

/**
 * The ids a log line carries where they are known, by these names, so that one Run, Attempt,
 * webhook delivery or installation can be followed through the logs of every process.
 */
export interface LogIds {
  run_id?: string;
  attempt_id?: string;
  delivery_id?: string;
  installation_id?: number;
}

export interface LogOptions {
  level?: string;
  /** Where the lines go (default stdout: JSON, or readable lines when stdout is a terminal). */
  destination?: DestinationStream;
  /** More values to mask in every line (the roster's agent secrets), beside the instance's own. */
  secrets?: Iterable<string | null | undefined>;
  env?: NodeJS.ProcessEnv;
}

const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const OWN_FIELDS = new Set(["level", "time", "pid", "hostname", "name", "msg"]);

/** A terminal's line: `12:00:01 INFO atelier.worker: attempt started run_id=… attempt_id=…`. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === "number" ? new Date(entry.time).toISOString().slice(11, 19) : "";
  const fields = Object.entries(entry)
    .filter(([k]) => !OWN_FIELDS.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return `${time} ${LEVELS[entry.level as number] ?? entry.level} ${String(entry.name ?? "")}: ${String(entry.msg ?? "")}${fields.length ? ` ${fields.join(" ")}` : ""}\n`;
}

/** Stdout: JSON lines, or readable ones in a terminal (LOG_FORMAT=json keeps JSON there too). */
function stdoutDestination(env: NodeJS.ProcessEnv): DestinationStream {
  if (process.stdout.isTTY && env.LOG_FORMAT !== "json") return { write: (line: string) => void process.stdout.write(prettyLine(line)) };
  return pino.destination({ dest: 1, sync: true });
}

/**
 * A logger that never prints a credential: tokens, JWTs, secrets and Authorization headers are
 * redacted by field wherever they appear in a logged object, and every finished line is masked
 * of the instance's secrets (and `secrets`), in their encoded forms too, and of anything shaped
 * like a GitHub token — an error message quoting a URL with a token included. LOG_LEVEL sets
 * the level (default info).
 */
export function createLog(name: string, options: LogOptions = {}): Log {
  const env = options.env ?? process.env;
  const redactor = new Redactor([...instanceSecretValues(env), ...(options.secrets ?? [])]);
  return pino(
    {
      name,
      level: options.level ?? env.LOG_LEVEL ?? "info",
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
      hooks: { streamWrite: (line: string) => redactor.redact(line) },
    },
    options.destination ?? stdoutDestination(env),
  );
}

/** A logger that prints nothing (tests, benchmarks). */
export const silentLog: Log = pino({ level: "silent" });
