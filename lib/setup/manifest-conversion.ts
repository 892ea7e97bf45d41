import { AtelierError, BadInputError } from "../errors";
import type { GitHubHost } from "./github-host";

/** What GitHub gives back once for a manifest code: the new App and its secrets. */
export interface AppConversion {
  id: number;
  slug: string;
  name: string;
  html_url: string;
  client_id: string;
  /** Secrets: stored, never logged, never shown. */
  client_secret: string;
  webhook_secret: string;
  pem: string;
}

const CODE = /^[A-Za-z0-9_-]{1,200}$/;

function field(body: Record<string, unknown>, name: keyof AppConversion): string {
  const value = body[name];
  if ((typeof value !== "string" || value === "") && typeof value !== "number") {
    throw new AtelierError("manifest_conversion_incomplete", `GitHub's answer to the manifest code has no ${name}; register the App again.`);
  }
  return String(value);
}

/**
 * Exchanges the manifest code for the App's credentials: `POST /app-manifests/{code}/conversions`
 * (no authentication; a code works once, for one hour). Error messages never carry a secret.
 */
export async function convertManifestCode(host: GitHubHost, code: string, fetchFn: typeof fetch = fetch): Promise<AppConversion> {
  if (!CODE.test(code)) throw new BadInputError("manifest_code_invalid", "GitHub's answer carries no usable code; start the registration again.");
  let response: Response;
  try {
    response = await fetchFn(`${host.apiUrl}/app-manifests/${code}/conversions`, {
      method: "POST",
      headers: { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "atelier-setup" },
    });
  } catch (err) {
    throw new AtelierError("github_unreachable", `Atelier could not reach ${host.apiUrl} (${(err as Error).message}); check the GitHub address and this server's network, then register again.`);
  }
  if (response.status === 404 || response.status === 422) {
    throw new BadInputError("manifest_code_invalid", "GitHub no longer knows this code: it works once, within an hour. Start the registration again.");
  }
  if (!response.ok) {
    throw new AtelierError("github_unavailable", `GitHub answered ${response.status} to the manifest conversion; try the registration again in a moment.`);
  }
  const body = (await response.json()) as Record<string, unknown>;
  const id = Number(field(body, "id"));
  if (!Number.isInteger(id) || id <= 0) throw new AtelierError("manifest_conversion_incomplete", "GitHub's answer has no App id; register the App again.");
  return {
    id,
    slug: field(body, "slug"),
    name: field(body, "name"),
    html_url: field(body, "html_url"),
    client_id: field(body, "client_id"),
    client_secret: field(body, "client_secret"),
    webhook_secret: field(body, "webhook_secret"),
    pem: field(body, "pem"),
  };
}
