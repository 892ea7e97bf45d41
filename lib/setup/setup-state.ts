import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { BadInputError } from "../errors";
import { decoded } from "../http/url-ids";
import type { GitHubHost } from "./github-host";

/**
 * Ties GitHub's redirect back to the browser that started the registration: a random `state`
 * goes to GitHub with the manifest and comes back with the code, and a signed, HttpOnly cookie
 * holds the same state with the chosen GitHub host (where the code is exchanged). A callback
 * whose state does not match the cookie, or that comes after an hour, changes nothing.
 */
export const SETUP_COOKIE = "atelier_setup";
export const SETUP_STATE_TTL_MS = 60 * 60 * 1000;

interface Payload {
  state: string;
  webUrl: string;
  apiUrl: string;
  expiresAt: number;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "atelier", "atelier setup state v1", 32));
}

const sign = (data: string, secret: string): string => createHmac("sha256", keyOf(secret)).update(data).digest("base64url");

/** A fresh state and the cookie value that remembers it with the host. */
export function sealSetupState(host: GitHubHost, secret: string, now: number = Date.now()): { state: string; cookie: string } {
  const state = randomBytes(16).toString("hex");
  const payload: Payload = { state, webUrl: host.webUrl, apiUrl: host.apiUrl, expiresAt: now + SETUP_STATE_TTL_MS };
  const data = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return { state, cookie: `${data}.${sign(data, secret)}` };
}

const mismatch = (why: string) =>
  new BadInputError("setup_state_mismatch", `This answer from GitHub does not belong to a registration started in this browser (${why}); start the registration again from the setup page.`);

/** The host of the registration the callback answers; throws `setup_state_mismatch` otherwise. */
export function openSetupState(cookie: string | null | undefined, state: string | null | undefined, secret: string, now: number = Date.now()): GitHubHost {
  if (!cookie) throw mismatch("no registration was started here, or its cookie expired");
  const [data = "", mac = ""] = cookie.split(".");
  const expected = Buffer.from(sign(data, secret));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw mismatch("its cookie is not one Atelier signed");
  const payload = JSON.parse(Buffer.from(data, "base64url").toString("utf8")) as Payload;
  if (payload.expiresAt <= now) throw mismatch("it is more than an hour old");
  const a = Buffer.from(String(state ?? ""));
  const b = Buffer.from(payload.state);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw mismatch("its state does not match");
  return { webUrl: payload.webUrl, apiUrl: payload.apiUrl };
}

/** The Set-Cookie header that remembers a started registration (the callback path only). */
export function setupCookieHeader(value: string, publicUrl: string): string {
  const secure = publicUrl.startsWith("https:") ? "; Secure" : "";
  return `${SETUP_COOKIE}=${value}; Path=/api/setup; HttpOnly; SameSite=Lax; Max-Age=${SETUP_STATE_TTL_MS / 1000}${secure}`;
}

/** The Set-Cookie header that forgets it. */
export const clearSetupCookieHeader = (): string => `${SETUP_COOKIE}=; Path=/api/setup; HttpOnly; SameSite=Lax; Max-Age=0`;

/** The state cookie's value in a Cookie header, or null (also when its percent-encoding is broken). */
export function setupCookieOf(cookieHeader: string | null | undefined): string | null {
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SETUP_COOKIE) return decoded(part.slice(eq + 1).trim()) || null;
  }
  return null;
}
