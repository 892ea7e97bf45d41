import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { rememberInstanceSecrets } from "./redact";

/**
 * Reads the secret kept at `file`, or makes one there (0600, created exclusively, so two parts
 * of one process — or two processes — that start together end up with the same one).
 */
export function keptSecret(file: string, onCreated: (file: string) => void = () => undefined): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const value = randomBytes(32).toString("base64url");
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(file, "utf8").trim();
    throw err;
  }
  try {
    writeSync(fd, `${value}\n`);
  } finally {
    closeSync(fd);
  }
  onCreated(file);
  return value;
}

/** An instance secret: its environment variable, else a file generated on a first start. */
export interface InstanceSecret {
  /** The variable that holds it, e.g. AUTH_SECRET. */
  variable: string;
  /** The variable that moves the generated file (for tests). */
  fileVariable: string;
  /** Where the generated one is kept, relative to the working directory. */
  defaultFile: string;
  /** What the one line printed on generating it adds (why to set the variable instead). */
  advice: string;
}

const cache = new Map<string, { file: string; value: string }>();

/**
 * The secret's value: from the environment, or generated once and kept in its 0600 file, so
 * that every part of the process — Next.js bundles its routes and pages apart, each with its
 * own copy of a module — and every restart use the same one. One line says when it is made.
 */
export function instanceSecret(secret: InstanceSecret, env: NodeJS.ProcessEnv = process.env): string {
  const given = env[secret.variable];
  if (given) return given;
  const file = resolve(/* turbopackIgnore: true */ env[secret.fileVariable] ?? secret.defaultFile);
  const known = cache.get(secret.variable);
  if (known?.file === file) return known.value;
  const value = keptSecret(file, (made) => console.warn(`atelier: ${secret.variable} is not set; generated one and kept it in ${made} (0600). ${secret.advice}`));
  cache.set(secret.variable, { file, value });
  rememberInstanceSecrets([value]);
  return value;
}

/**
 * The instance's two generated secrets. `auth` signs the sign-in cookies and seals users'
 * GitHub tokens at rest; web processes on several hosts must share one. `key` seals the GitHub
 * App's credentials in Postgres; the web process and every worker must use the same one.
 */
export const INSTANCE_SECRETS = {
  auth: { variable: "AUTH_SECRET", fileVariable: "ATELIER_AUTH_SECRET_FILE", defaultFile: ".atelier/auth-secret", advice: "Set AUTH_SECRET to run the dashboard on several hosts." },
  key: {
    variable: "ATELIER_SECRET_KEY",
    fileVariable: "ATELIER_SECRET_KEY_FILE",
    defaultFile: ".atelier/secret-key",
    advice: "Set ATELIER_SECRET_KEY (the same on every host) to run workers elsewhere; without it the stored App credentials cannot be read.",
  },
} as const satisfies Record<string, InstanceSecret>;
