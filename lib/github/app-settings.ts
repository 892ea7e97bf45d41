import { createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { BadInputError } from "../errors";
import { rememberInstanceSecrets } from "../secrets/redact";
import { isPlainCredential, openCredential, sealCredential } from "../secrets/credential-box";
import { readAppCredentials, replacePlainCredentials } from "../store/github/app-credential-rows";
import type { Db } from "../store/kernel/db";
import { secretKey } from "../secrets/secret-key";

/**
 * The GitHub App Atelier acts as: its id, private key, webhook secret and API base URL. They
 * come from the environment (a real App), else from the sandbox file the simulator's start
 * script writes (ATELIER_SANDBOX_APP_FILE), else from the app_credentials table (the manifest
 * flow). Every problem is a BadInputError whose message says what to fix.
 */
export interface GitHubAppSettings {
  appId: number;
  /** PEM (PKCS#1 or PKCS#8). Never logged. */
  privateKey: string;
  /** Never logged. */
  webhookSecret: string;
  /** REST and GraphQL base, without a trailing slash: https://api.github.com, or the simulator. */
  baseUrl: string;
  clientId: string | null;
  clientSecret: string | null;
  /** Where people browse GitHub (OAuth pages, links), when the source says: null means github.com's or the env's. */
  webUrl: string | null;
  source: "env" | "sandbox-file" | "database";
}

export const DEFAULT_GITHUB_API_URL = "https://api.github.com";

type Source = GitHubAppSettings["source"];

/** Reads the App's settings from the first source that has them. */
export async function loadGitHubAppSettings(
  options: { env?: NodeJS.ProcessEnv; db?: Db } = {},
): Promise<GitHubAppSettings> {
  const env = options.env ?? process.env;
  if (env.GITHUB_APP_ID) return settingsFromEnv(env);
  if (env.ATELIER_SANDBOX_APP_FILE) return settingsFromSandboxFile(env.ATELIER_SANDBOX_APP_FILE);
  if (options.db) {
    const stored = await settingsFromDatabase(options.db);
    if (stored) return stored;
  }
  throw new BadInputError(
    "github_app_not_configured",
    "No GitHub App is configured: set GITHUB_APP_ID, GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) and GITHUB_WEBHOOK_SECRET, " +
      "or run `npm start` without them to use the sandbox simulator, or create the App from the dashboard (manifest flow).",
  );
}

/** The App from GITHUB_APP_ID, GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH, GITHUB_WEBHOOK_SECRET, GITHUB_API_URL. */
export async function settingsFromEnv(env: NodeJS.ProcessEnv): Promise<GitHubAppSettings> {
  let key = env.GITHUB_PRIVATE_KEY;
  if (!key && env.GITHUB_PRIVATE_KEY_PATH) {
    try {
      key = await readFile(env.GITHUB_PRIVATE_KEY_PATH, "utf8");
    } catch (err) {
      throw new BadInputError(
        "github_private_key_unreadable",
        `GITHUB_PRIVATE_KEY_PATH is ${env.GITHUB_PRIVATE_KEY_PATH}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}): point it at the .pem file GitHub gave you when you generated the App's private key.`,
      );
    }
  }
  if (!key) {
    throw new BadInputError(
      "github_private_key_missing",
      "GITHUB_APP_ID is set but there is no private key: set GITHUB_PRIVATE_KEY to the contents of the App's .pem file, or GITHUB_PRIVATE_KEY_PATH to its path.",
    );
  }
  return validateSettings(
    {
      appId: env.GITHUB_APP_ID,
      privateKey: key,
      webhookSecret: env.GITHUB_WEBHOOK_SECRET,
      baseUrl: env.GITHUB_API_URL,
      clientId: env.GITHUB_CLIENT_ID,
      clientSecret: env.GITHUB_CLIENT_SECRET,
      webUrl: env.GITHUB_WEB_URL,
    },
    "env",
    { appId: "GITHUB_APP_ID", privateKey: "GITHUB_PRIVATE_KEY", webhookSecret: "GITHUB_WEBHOOK_SECRET", baseUrl: "GITHUB_API_URL" },
  );
}

/** The App the simulator's start script described in a JSON file (camelCase or snake_case keys). */
export async function settingsFromSandboxFile(path: string): Promise<GitHubAppSettings> {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new BadInputError(
      "github_sandbox_file_unreadable",
      `ATELIER_SANDBOX_APP_FILE is ${path}, which cannot be read as JSON (${(err as Error).message}): start the simulator (npm run sim) so that it writes the file, or unset ATELIER_SANDBOX_APP_FILE.`,
    );
  }
  const pick = (...names: string[]) => names.map((n) => raw[n]).find((v) => v !== undefined && v !== null);
  return validateSettings(
    {
      appId: pick("appId", "app_id", "id"),
      privateKey: pick("privateKey", "private_key", "pem"),
      webhookSecret: pick("webhookSecret", "webhook_secret"),
      baseUrl: pick("baseUrl", "base_url", "apiUrl", "api_url"),
      clientId: pick("clientId", "client_id"),
      clientSecret: pick("clientSecret", "client_secret"),
      webUrl: pick("webUrl", "web_url"),
    },
    "sandbox-file",
    { appId: `appId in ${path}`, privateKey: `privateKey in ${path}`, webhookSecret: `webhookSecret in ${path}`, baseUrl: `baseUrl in ${path}` },
  );
}

/**
 * The App stored by the manifest flow, or null when none was stored. Its key and secrets are
 * sealed under `key`; a row stored before sealing existed is sealed in place on this read.
 */
export async function settingsFromDatabase(db: Db, key: string = secretKey()): Promise<GitHubAppSettings | null> {
  const row = await readAppCredentials(db);
  if (!row) return null;
  if (isPlainCredential(row.privateKey)) await sealStoredCredentials(db, row, key);
  return validateSettings(
    {
      appId: String(row.appId),
      privateKey: openCredential(row.privateKey, key, "app_credentials.private_key"),
      webhookSecret: openCredential(row.webhookSecret, key, "app_credentials.webhook_secret"),
      baseUrl: row.baseUrl,
      clientId: row.clientId,
      clientSecret: openCredential(row.clientSecret, key, "app_credentials.client_secret"),
      webUrl: new URL(row.htmlUrl).origin,
    },
    "database",
    { appId: "app_credentials.app_id", privateKey: "app_credentials.private_key", webhookSecret: "app_credentials.webhook_secret", baseUrl: "app_credentials.base_url" },
  );
}

/** Seals the credentials of a row stored in plain text (before sealing existed), in place. */
async function sealStoredCredentials(db: Db, row: { privateKey: string; webhookSecret: string; clientSecret: string }, key: string): Promise<void> {
  const sealed = {
    privateKey: sealCredential(row.privateKey, key),
    webhookSecret: isPlainCredential(row.webhookSecret) ? sealCredential(row.webhookSecret, key) : row.webhookSecret,
    clientSecret: isPlainCredential(row.clientSecret) ? sealCredential(row.clientSecret, key) : row.clientSecret,
  };
  await replacePlainCredentials(db, row.privateKey, sealed);
  Object.assign(row, sealed);
}

interface RawSettings {
  appId: unknown;
  privateKey: unknown;
  webhookSecret: unknown;
  baseUrl: unknown;
  clientId: unknown;
  clientSecret: unknown;
  webUrl: unknown;
}

function validateSettings(
  raw: RawSettings,
  source: Source,
  names: { appId: string; privateKey: string; webhookSecret: string; baseUrl: string },
): GitHubAppSettings {
  const appId = Number(raw.appId);
  if (!Number.isInteger(appId) || appId <= 0) {
    throw new BadInputError(
      "github_app_id_invalid",
      `${names.appId} must be the App's numeric id (GitHub → Settings → Developer settings → GitHub Apps → your App → "App ID"), not ${JSON.stringify(raw.appId ?? null)}.`,
    );
  }
  const privateKey = normalizePrivateKey(raw.privateKey, names.privateKey);
  const webhookSecret = typeof raw.webhookSecret === "string" ? raw.webhookSecret : "";
  if (webhookSecret === "") {
    throw new BadInputError(
      "github_webhook_secret_missing",
      `${names.webhookSecret} is empty: set it to the App's webhook secret (the "Webhook secret" of the App's settings on GitHub); Atelier refuses webhooks it cannot verify.`,
    );
  }
  const baseUrl = normalizeBaseUrl(raw.baseUrl, names.baseUrl);
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  const webUrl = text(raw.webUrl)?.replace(/\/+$/, "") ?? null;
  const clientSecret = text(raw.clientSecret);
  // whatever the source (a key file, the sandbox's file, the database), no transcript or log shows them
  rememberInstanceSecrets([privateKey, webhookSecret, clientSecret]);
  return { appId, privateKey, webhookSecret, baseUrl, clientId: text(raw.clientId), clientSecret, webUrl, source };
}

/** Accepts a PEM with real or escaped (`\n`) newlines; refuses anything that is not a private key. */
export function normalizePrivateKey(value: unknown, name = "GITHUB_PRIVATE_KEY"): string {
  const pem = typeof value === "string" ? value.replace(/\\n/g, "\n").trim() + "\n" : "";
  const hint = `${name} must be the App's private key: the whole .pem file GitHub gave you, from "-----BEGIN RSA PRIVATE KEY-----" to "-----END RSA PRIVATE KEY-----" (newlines may be written as \\n); generate a new one in the App's settings if it is lost.`;
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(pem)) {
    throw new BadInputError("github_private_key_invalid", `${name} is not a PEM private key. ${hint}`);
  }
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") throw new Error(`a ${key.asymmetricKeyType} key`);
  } catch (err) {
    throw new BadInputError("github_private_key_invalid", `${name} does not parse as an RSA private key (${(err as Error).message}). ${hint}`);
  }
  return pem;
}

function normalizeBaseUrl(value: unknown, name: string): string {
  const url = typeof value === "string" && value !== "" ? value : DEFAULT_GITHUB_API_URL;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new BadInputError(
      "github_api_url_invalid",
      `${name} is ${JSON.stringify(url)}, which is not an http(s) URL: leave it unset for github.com, or set it to your GitHub Enterprise Server's API URL (https://HOST/api/v3).`,
    );
  }
  return url.replace(/\/+$/, "");
}
