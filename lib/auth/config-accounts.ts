import type { Db } from "../store/kernel/db";
import { recordAccountResolution, resolvedAccounts } from "../store/people/account-resolutions";
import { gitHubAccountId, gitHubHost } from "../github/github-user-api";
import { TtlCache } from "./ttl-cache";

/**
 * The accounts the instance config names by login — its `admins` (THREATS.md attack 14) and its
 * `allowed_orgs` (attack 23) — are GitHub accounts, not logins. Each login is resolved to its
 * account id once, the first time it is needed, on the GitHub host Atelier talks to, and stored
 * (`account_resolutions`, ADR 0071). From then on the id is the account: one that renames stays
 * the one meant, and whoever later takes the old login (a rename, a recycled account, an
 * organization deleted and created again) is not. An id resolved on another host (the sandbox's
 * simulator before github.com) means nothing here. Removing a login from the config removes it.
 */

const IDS_TTL_MS = 30_000;
const cache = new TtlCache<Set<string>>(IDS_TTL_MS, 16);

/**
 * The account ids of the config's `logins`. Logins not resolved yet on this host are looked up
 * on GitHub with `token` (any signed-in person's: GET /users/{login} is public); one GitHub does
 * not know stays unresolved and names nobody.
 */
export async function configAccountIds(db: Db, logins: readonly string[], token: string | null, apiUrl?: string): Promise<Set<string>> {
  const wanted = [...new Set(logins.map((l) => l.toLowerCase()))].sort();
  if (wanted.length === 0) return new Set();
  const host = gitHubHost(apiUrl);
  return cache.get(`${host}\u0000${wanted.join(",")}`, async () => {
    const ids = await resolveOnce(wanted, {
      stored: (keys) => resolvedAccounts(db, host, keys),
      lookup: (login) => (token ? gitHubAccountId(token, login, apiUrl) : Promise.resolve(null)),
      record: (login, id) => recordAccountResolution(db, host, login, id),
    });
    return new Set(ids.values());
  });
}

/** Where a config's names are resolved: the stored resolutions, how one is looked up, and how it is stored. */
export interface Resolutions {
  stored(keys: string[]): Promise<Map<string, string>>;
  /** The id `key` names now; null when nothing answers to it (it stays unresolved and names nobody). */
  lookup(key: string): Promise<string | null>;
  /** Stores a resolution unless one is stored already: the first stays. */
  record(key: string, id: string): Promise<void>;
}

/**
 * The ids of `keys`, by key: each resolved once — the stored resolution when there is one, else
 * looked up now and stored. Read back after storing, so a resolution another process stored
 * first wins over this one.
 */
export async function resolveOnce(keys: string[], resolutions: Resolutions): Promise<Map<string, string>> {
  const stored = await resolutions.stored(keys);
  let recorded = false;
  for (const key of keys.filter((k) => !stored.has(k))) {
    const id = await resolutions.lookup(key);
    if (id === null) continue;
    await resolutions.record(key, id);
    recorded = true;
  }
  return recorded ? resolutions.stored(keys) : stored;
}

/** Forgets the cached ids (tests; the stored resolutions stay). */
export function forgetConfigAccountIds(): void {
  cache.clear();
}
