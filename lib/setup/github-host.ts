import { BadInputError } from "../errors";
import type { Resolver } from "../http/resolver";
import { bareHost, checkedAddresses, type AddressSubject } from "../outbound/target-policy";

/**
 * Which GitHub the App is registered on: github.com, or a GitHub Enterprise Server given by its
 * web address. People's browsers go to `webUrl` (the manifest form); Atelier calls `apiUrl`
 * (the code conversion, and every API call afterwards).
 */
export interface GitHubHost {
  webUrl: string;
  apiUrl: string;
}

export const GITHUB_COM: GitHubHost = Object.freeze({ webUrl: "https://github.com", apiUrl: "https://api.github.com" });

const trim = (url: string): string => url.replace(/\/+$/, "");

/**
 * The host for a web address: github.com's API is api.github.com, a GitHub Enterprise Server's
 * is <web>/api/v3. When the address is the one GITHUB_WEB_URL names (the sandbox simulator, or
 * a server set up by environment), GITHUB_API_URL says where its API is.
 */
export function gitHubHost(webUrl: string | null | undefined, env: NodeJS.ProcessEnv = process.env): GitHubHost {
  const raw = (webUrl ?? "").trim();
  if (!raw) return GITHUB_COM;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadInputError("github_url_invalid", `${JSON.stringify(raw)} is not a web address: give your GitHub Enterprise Server's address, e.g. https://github.example.com.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new BadInputError("github_url_invalid", `The GitHub address must start with https:// (or http://), not ${JSON.stringify(raw)}.`);
  }
  if (url.search || url.hash) {
    throw new BadInputError("github_url_invalid", `Give the GitHub address alone, without ?query or #fragment: ${url.origin}${url.pathname}.`);
  }
  const web = trim(`${url.origin}${url.pathname}`);
  if (url.hostname === "github.com" || url.hostname === "www.github.com") return GITHUB_COM;
  if (env.GITHUB_WEB_URL && env.GITHUB_API_URL && trim(env.GITHUB_WEB_URL) === web) return { webUrl: web, apiUrl: trim(env.GITHUB_API_URL) };
  return { webUrl: web, apiUrl: `${web}/api/v3` };
}

const GHES: AddressSubject = {
  stem: "github_url",
  noun: "The GitHub Enterprise Server",
  advice: "Atelier registers its App only on a public server unless ATELIER_GHES_ALLOW_PRIVATE=1 says a server on your own network is meant.",
};

/** Whether the host is the one the operator configured (GITHUB_WEB_URL), which needs no check. */
const configuredByOperator = (host: GitHubHost, env: NodeJS.ProcessEnv): boolean =>
  Boolean(env.GITHUB_WEB_URL) && trim(env.GITHUB_WEB_URL!) === host.webUrl;

/**
 * A GitHub Enterprise Server named in the setup form is used only when it is https (unless
 * ATELIER_GHES_ALLOW_HTTP=1) and every address it resolves to is public (unless
 * ATELIER_GHES_ALLOW_PRIVATE=1): Atelier posts the code GitHub gives it there and trusts the
 * App credentials that come back. github.com and the operator's GITHUB_WEB_URL pass as they are.
 */
export async function assertGitHubHostAllowed(host: GitHubHost, env: NodeJS.ProcessEnv = process.env, resolve?: Resolver): Promise<void> {
  if (host === GITHUB_COM || host.webUrl === GITHUB_COM.webUrl || configuredByOperator(host, env)) return;
  const url = new URL(host.webUrl);
  if (url.protocol !== "https:" && env.ATELIER_GHES_ALLOW_HTTP !== "1") {
    throw new BadInputError(
      "github_url_insecure",
      `The GitHub Enterprise Server must be reached over https:// (${url.host} was given as ${url.protocol}//): the App's private key comes back from it. Set ATELIER_GHES_ALLOW_HTTP=1 only for a server you reach over a network you trust.`,
      { host: url.host },
    );
  }
  await checkedAddresses(bareHost(url), { allowPrivate: env.ATELIER_GHES_ALLOW_PRIVATE === "1", ...(resolve ? { resolve } : {}) }, GHES);
}
