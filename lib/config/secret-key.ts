import { instanceSecret } from "./kept-secret";

/** Where a key generated on a first start is kept (0600). */
export const GENERATED_SECRET_KEY_FILE = ".atelier/secret-key";

/**
 * The key the GitHub App's credentials are sealed under in Postgres: ATELIER_SECRET_KEY.
 * Without it (a first local start), one is generated once and kept in .atelier/secret-key
 * (0600). The web process and every worker must use the same key.
 */
export function secretKey(env: NodeJS.ProcessEnv = process.env): string {
  return instanceSecret(
    {
      variable: "ATELIER_SECRET_KEY",
      fileVariable: "ATELIER_SECRET_KEY_FILE",
      defaultFile: GENERATED_SECRET_KEY_FILE,
      advice: "Set ATELIER_SECRET_KEY (the same on every host) to run workers elsewhere; without it the stored App credentials cannot be read.",
    },
    env,
  );
}
