import { AtelierError } from "../errors";
import { isSealed, seal, unseal } from "./token-box";

/**
 * The App's credentials at rest (`app_credentials.private_key`, `webhook_secret`,
 * `client_secret`): sealed under ATELIER_SECRET_KEY. A value stored before sealing existed is
 * told apart by its shape and sealed on its first read (lib/github/app-settings.ts).
 */
const PURPOSE = "atelier app credentials v1";

export const sealCredential = (value: string, key: string): string => seal(value, key, PURPOSE);

/** Whether a stored credential is still in plain text (stored before sealing existed). */
export const isPlainCredential = (value: string): boolean => !isSealed(value);

/** The credential, or `secret_key_mismatch` when it was sealed under another key or is damaged. */
export function openCredential(value: string, key: string, column: string): string {
  const opened = unseal(value, key, PURPOSE);
  if (opened === null) {
    throw new AtelierError(
      "secret_key_mismatch",
      `${column} does not open with this ATELIER_SECRET_KEY (or .atelier/secret-key): set the key the GitHub App was registered under, or delete the row of app_credentials and register the App again from /setup.`,
    );
  }
  return opened;
}
