import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";

let cached: { key: string; value: string } | undefined;

/** Where a secret generated on a first start is kept (0600), for every part of the web process to read. */
export const GENERATED_AUTH_SECRET_FILE = ".atelier/auth-secret";

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

/**
 * The secret that signs the sign-in cookies and seals users' GitHub tokens at rest: AUTH_SECRET.
 * Without it (a first local run), one is generated once and kept in .atelier/auth-secret (0600),
 * so that every part of the web process — Next.js bundles its routes and pages apart, each with
 * its own copy of this module — and every restart use the same one. Web processes on several
 * hosts must share one AUTH_SECRET.
 */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTH_SECRET) return env.AUTH_SECRET;
  const file = resolve(/* turbopackIgnore: true */ env.ATELIER_AUTH_SECRET_FILE ?? GENERATED_AUTH_SECRET_FILE);
  if (cached?.key !== file) {
    const value = keptSecret(file, (made) =>
      console.warn(`atelier: AUTH_SECRET is not set; generated one and kept it in ${made} (0600). Set AUTH_SECRET to run the dashboard on several hosts.`),
    );
    cached = { key: file, value };
  }
  return cached.value;
}
