import NextAuth, { type NextAuthConfig } from "next-auth";
import type { Adapter, AdapterUser } from "next-auth/adapters";
import GitHub from "next-auth/providers/github";
import { authSecret } from "../../lib/auth/auth-secret";
import { configAccountIds } from "../../lib/auth/config-accounts";
import { mayUseInstance } from "../../lib/auth/allowed-orgs";
import { forgetAccess } from "../../lib/auth/authorize";
import { instanceConfig, instanceConfigProblem } from "../../lib/auth/instance-config";
import { resolveGitHubEnv, type GitHubEnv } from "../../lib/github/github-env";
import { SESSION_MAX_AGE_SECONDS, storeUserToken } from "../../lib/auth/sessions";
import { createSession, deleteSession, getSessionAndUser, updateSession } from "../../lib/store/people/session-rows";
import { getUser, updateUserProfile, upsertUser, type StoredUser } from "../../lib/store/people/users";
import { db } from "./db";

/**
 * Sign-in with GitHub (next-auth 5, database sessions in Postgres). The OAuth client is the
 * GitHub App's; every GitHub URL comes from GITHUB_WEB_URL / GITHUB_API_URL, so the same code
 * signs in against github.com, an Enterprise Server or the sandbox's simulator. The person's
 * GitHub token is sealed into `users.token` and never put in the session the browser can read.
 */

interface GitHubProfile {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string | null;
}

type AtelierAdapterUser = AdapterUser & { login?: string; githubId?: string };

const toAdapterUser = (u: StoredUser): AdapterUser & { login: string } => ({
  id: u.id,
  login: u.login,
  name: u.name,
  image: u.avatarUrl,
  email: "",
  emailVerified: null,
});

function adapter(): Adapter {
  return {
    async createUser(user) {
      const u = user as AtelierAdapterUser;
      if (!u.githubId || !u.login) throw new Error("the GitHub profile has no id or login");
      return toAdapterUser(await upsertUser(db(), { githubId: u.githubId, login: u.login, name: u.name ?? null, avatarUrl: u.image ?? null }));
    },
    async getUser(id) {
      const u = await getUser(db(), id);
      return u ? toAdapterUser(u) : null;
    },
    // People are never matched by e-mail: the GitHub account id is the identity.
    getUserByEmail: async () => null,
    async getUserByAccount({ provider, providerAccountId }) {
      if (provider !== "github") return null;
      const u = await getUser(db(), providerAccountId);
      return u ? toAdapterUser(u) : null;
    },
    async updateUser(user) {
      const u = await updateUserProfile(db(), user.id, {
        ...(user.name !== undefined ? { name: user.name } : {}),
        ...(user.image !== undefined ? { avatarUrl: user.image } : {}),
      });
      if (!u) throw new Error(`no user ${user.id}`);
      return toAdapterUser(u);
    },
    async linkAccount(account) {
      if (account.access_token) await storeUserToken(db(), account.userId, account.access_token, authSecret());
    },
    createSession: (session) => createSession(db(), session),
    async getSessionAndUser(sessionToken) {
      const found = await getSessionAndUser(db(), sessionToken);
      return found ? { session: found.session, user: toAdapterUser(found.user) } : null;
    },
    updateSession: (session) => updateSession(db(), session.sessionToken, session.expires),
    deleteSession: (sessionToken) => deleteSession(db(), sessionToken),
  };
}

function config(gh: GitHubEnv): NextAuthConfig {
  return {
    secret: authSecret(),
    // Self-hosted behind whatever proxy: the redirect URLs use the request's host.
    trustHost: true,
    adapter: adapter(),
    session: { strategy: "database", maxAge: SESSION_MAX_AGE_SECONDS, updateAge: 24 * 60 * 60 },
    pages: { signIn: "/signin", error: "/signin" },
    providers: [
      GitHub({
        clientId: gh.clientId ?? "missing-client-id",
        clientSecret: gh.clientSecret ?? "missing-client-secret",
        issuer: `${gh.webUrl}/login/oauth`,
        authorization: { url: `${gh.webUrl}/login/oauth/authorize`, params: { scope: "read:user" } },
        token: `${gh.webUrl}/login/oauth/access_token`,
        userinfo: {
          url: `${gh.apiUrl}/user`,
          async request({ tokens }: { tokens: { access_token?: string } }) {
            const res = await fetch(`${gh.apiUrl}/user`, {
              headers: { authorization: `Bearer ${tokens.access_token}`, accept: "application/vnd.github+json", "user-agent": "atelier-dashboard" },
            });
            if (!res.ok) throw new Error(`GitHub answered ${res.status} to GET /user`);
            return (await res.json()) as GitHubProfile;
          },
        },
        profile(p: GitHubProfile) {
          return { id: String(p.id), githubId: String(p.id), login: p.login, name: p.name ?? p.login, email: null, image: p.avatar_url };
        },
      }),
    ],
    callbacks: {
      // allowed_orgs (atelier.config.yml): only people of those organizations sign in
      async signIn({ account, profile }) {
        const p = profile as unknown as GitHubProfile | undefined;
        if (!p?.login || !account?.access_token) return false;
        // an instance config that does not load refuses every sign-in: say what is wrong, and where
        const problem = await instanceConfigProblem();
        if (problem) {
          console.error(`atelier: sign-in refused: ${problem}`);
          return "/signin?error=InstanceConfig";
        }
        const config = await instanceConfig();
        if ((await configAccountIds(db(), config.admins, account.access_token, gh.apiUrl)).has(String(p.id))) return true;
        return mayUseInstance(db(), config, String(p.id), account.access_token, gh.apiUrl);
      },
      // What /api/auth/session hands the browser: who, never the GitHub token.
      session({ session, user }) {
        const u = user as AdapterUser & { login?: string };
        // no sessionToken, no userId, no GitHub token: only who is signed in, and until when
        return { user: { id: u.id, name: u.name ?? null, image: u.image ?? null, login: u.login }, expires: session.expires } as unknown as typeof session;
      },
    },
    events: {
      // Every sign-in refreshes the stored token and the profile (a returning user's token
      // changes; next-auth links the account only the first time).
      async signIn({ user, account, profile }) {
        if (!user.id) return;
        const p = profile as unknown as GitHubProfile | undefined;
        if (p?.login) await upsertUser(db(), { githubId: String(p.id), login: p.login, name: p.name ?? p.login, avatarUrl: p.avatar_url });
        if (account?.access_token) await storeUserToken(db(), user.id, account.access_token, authSecret());
        forgetAccess(user.id);
      },
    },
    logger: {
      // next-auth's errors can quote provider responses; keep them to their name and message.
      error(error) {
        console.error(`atelier: sign-in error: ${error.name}: ${error.message}`);
      },
      warn(code) {
        if (code !== "debug-enabled") console.warn(`atelier: sign-in warning: ${code}`);
      },
      debug() {},
    },
  };
}

export const { handlers, signIn, signOut } = NextAuth(async () => config(await resolveGitHubEnv(db())));
