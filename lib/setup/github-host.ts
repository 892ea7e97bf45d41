import { BadInputError } from "../errors";

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
