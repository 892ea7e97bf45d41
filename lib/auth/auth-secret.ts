import { instanceSecret } from "../config/kept-secret";

/** Where a secret generated on a first start is kept (0600), for every part of the web process to read. */
export const GENERATED_AUTH_SECRET_FILE = ".atelier/auth-secret";

/**
 * The secret that signs the sign-in cookies and seals users' GitHub tokens at rest: AUTH_SECRET.
 * Without it (a first local run), one is generated once and kept in .atelier/auth-secret (0600).
 * Web processes on several hosts must share one AUTH_SECRET.
 */
export function authSecret(env: NodeJS.ProcessEnv = process.env): string {
  return instanceSecret(
    {
      variable: "AUTH_SECRET",
      fileVariable: "ATELIER_AUTH_SECRET_FILE",
      defaultFile: GENERATED_AUTH_SECRET_FILE,
      advice: "Set AUTH_SECRET to run the dashboard on several hosts.",
    },
    env,
  );
}
