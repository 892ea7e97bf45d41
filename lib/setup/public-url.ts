import { BadInputError } from "../errors";

/**
 * Where people and GitHub reach this Atelier: ATELIER_PUBLIC_URL (e.g. https://atelier.example.com),
 * else http://localhost:<PORT>. Check runs and comments link to Run pages under it; the App's
 * webhook and setup callback are registered under it.
 */
export function publicUrl(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.ATELIER_PUBLIC_URL || `http://localhost:${env.PORT || 3000}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadInputError("public_url_invalid", `ATELIER_PUBLIC_URL is ${JSON.stringify(value)}, which is not a URL: set it to the address people and GitHub use to reach Atelier, e.g. https://atelier.example.com.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BadInputError("public_url_invalid", `ATELIER_PUBLIC_URL must be an http(s) URL, not ${JSON.stringify(value)}.`);
  }
  return value.replace(/\/+$/, "");
}
