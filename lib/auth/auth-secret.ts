import { randomBytes } from "node:crypto";

let generated: string | undefined;

/**
 * The secret that signs the sign-in cookies and seals users' GitHub tokens at rest: AUTH_SECRET.
 * Without it (a first local run), a random secret for this process is used and said once:
 * sessions survive a restart (they are rows), but the sealed tokens do not, so people sign in
 * again after one. Several web processes must share one AUTH_SECRET.
 */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTH_SECRET) return env.AUTH_SECRET;
  if (!generated) {
    generated = randomBytes(32).toString("base64url");
    console.warn(
      "atelier: AUTH_SECRET is not set; using a random secret for this process (people sign in again after a restart). Set AUTH_SECRET to 32+ random characters (openssl rand -base64 32).",
    );
  }
  return generated;
}
