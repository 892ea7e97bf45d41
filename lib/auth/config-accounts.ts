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
    const stored = await resolvedAccounts(db, host, wanted);
    const missing = wanted.filter((l) => !stored.has(l));
    if (missing.length && token) {
      for (const login of missing) {
        const id = await gitHubAccountId(token, login, apiUrl);
        if (id === null) continue;
        await recordAccountResolution(db, host, login, id);
      }
      return new Set((await resolvedAccounts(db, host, wanted)).values());
    }
    return new Set(stored.values());
  });
}

/** Forgets the cached ids (tests; the stored resolutions stay). */
export function forgetConfigAccountIds(): void {
  cache.clear();
}
