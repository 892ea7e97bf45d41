import { loadInstanceConfig, type InstanceConfig } from "../config/roster";
import { AtelierError } from "../errors";

const TTL_MS = 30_000;
let cached: { at: number; value: Promise<InstanceConfig> } | undefined;

/**
 * The instance config (admins, Board lanes) for the web process, re-read at most every 30 s so
 * an edit of atelier.config.yml shows without a restart. A config that does not parse throws
 * its own clear error (instance_config_invalid) on every request until it is fixed.
 */
export function instanceConfig(): Promise<InstanceConfig> {
  const now = Date.now();
  if (!cached || now - cached.at > TTL_MS) {
    const value = loadInstanceConfig();
    cached = { at: now, value };
    value.catch(() => {
      if (cached?.value === value) cached = undefined;
    });
  }
  return cached.value;
}

/** Tests swap the config in; `undefined` goes back to the file. */
export function setInstanceConfigForTests(config: InstanceConfig | undefined): void {
  // an entry from the far future never expires
  cached = config ? { at: Number.POSITIVE_INFINITY, value: Promise.resolve(config) } : undefined;
}

/**
 * What is wrong with the instance config, when it does not load: its own message (the file, each
 * offending key and its line: `instance_config_invalid`, `instance_config_missing`); null when it
 * loads. The sign-in page shows it, and the sign-in refuses with it in the log, rather than
 * "GitHub did not let you in".
 */
export async function instanceConfigProblem(): Promise<string | null> {
  try {
    await instanceConfig();
    return null;
  } catch (err) {
    return err instanceof AtelierError ? err.message : `The instance config could not be read: ${String(err)}`;
  }
}
