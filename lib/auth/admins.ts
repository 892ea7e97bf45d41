import type { Db } from "../store/kernel/db";
import { recordAdminResolution, resolvedAdmins } from "../store/people/instance-admins";
import { gitHubAccountId } from "../github/github-user-api";
import { TtlCache } from "./ttl-cache";

/**
 * Instance admins are GitHub accounts, not logins (THREATS.md attack 14). The instance config
 * names them by login, as people do; each login is resolved to its account id once — the first
 * time it is needed — and stored (`instance_admins`). From then on the id is the admin: an admin
 * who renames stays one, and whoever later takes the old login (a rename, a recycled account)
 * is not. Removing a login from the config removes the admin.
 */

const ADMIN_IDS_TTL_MS = 30_000;
const cache = new TtlCache<Set<string>>(ADMIN_IDS_TTL_MS, 8);

/**
 * The account ids of the config's admin logins. Logins not resolved yet are looked up on GitHub
 * with `token` (any signed-in person's: GET /users/{login} is public); one GitHub does not know
 * stays unresolved and grants nothing.
 */
export async function adminAccountIds(db: Db, logins: readonly string[], token: string | null, apiUrl?: string): Promise<Set<string>> {
  const wanted = [...new Set(logins.map((l) => l.toLowerCase()))].sort();
  if (wanted.length === 0) return new Set();
  return cache.get(wanted.join(","), async () => {
    const stored = await resolvedAdmins(db, wanted);
    const missing = wanted.filter((l) => !stored.has(l));
    if (missing.length && token) {
      for (const login of missing) {
        const id = await gitHubAccountId(token, login, apiUrl);
        if (id === null) continue;
        await recordAdminResolution(db, login, id);
      }
      return new Set((await resolvedAdmins(db, wanted)).values());
    }
    return new Set(stored.values());
  });
}

/** Forgets the cached ids (tests; the stored resolution stays). */
export function forgetAdminIds(): void {
  cache.clear();
}
