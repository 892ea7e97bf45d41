import { createSign, createVerify } from "node:crypto";
import { GitHubApiError } from "./api-error";
import type { SimApp } from "./model";

function b64url(input: Buffer | string): string {
  return Buffer.from(input).toString("base64url");
}

export function looksLikeJwt(token: string): boolean {
  return /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(token);
}

/** Signs an App JWT the way GitHub's docs describe (iat 60 s in the past, exp ≤ 10 min). */
export function signAppJwt(appId: number | string, privateKey: string, nowMs = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = b64url(JSON.stringify({ iat: now - 60, exp: now + 540, iss: String(appId) }));
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKey);
  return `${header}.${payload}.${b64url(signature)}`;
}

const undecodable = (): GitHubApiError =>
  new GitHubApiError(401, "A JSON web token could not be decoded", undefined, {}, "https://docs.github.com/rest");

/**
 * Verifies an App JWT: RS256 signed by the App's key, `iss` = the App's id (or client id),
 * issued in the past, expiring in the future but at most 10 minutes ahead. The messages are
 * GitHub's, so @octokit/auth-app's clock-skew correction recognises them.
 */
export function verifyAppJwt(jwt: string, app: SimApp, nowMs: number): void {
  const [rawHeader, rawPayload, rawSignature] = jwt.split(".");
  if (!rawHeader || !rawPayload || !rawSignature) throw undecodable();
  let header: { alg?: unknown };
  let payload: { iat?: unknown; exp?: unknown; iss?: unknown };
  try {
    header = JSON.parse(Buffer.from(rawHeader, "base64url").toString("utf8")) as typeof header;
    payload = JSON.parse(Buffer.from(rawPayload, "base64url").toString("utf8")) as typeof payload;
  } catch {
    throw undecodable();
  }
  if (header.alg !== "RS256") throw undecodable();
  const valid = createVerify("RSA-SHA256")
    .update(`${rawHeader}.${rawPayload}`)
    .verify(app.publicKey, Buffer.from(rawSignature, "base64url"));
  if (String(payload.iss) !== String(app.id) && payload.iss !== app.clientId) {
    throw new GitHubApiError(401, "'Issuer' claim ('iss') must be an Integer");
  }
  if (!valid) throw undecodable();
  const now = Math.floor(nowMs / 1000);
  if (typeof payload.iat !== "number" || !Number.isInteger(payload.iat) || payload.iat > now + 60) {
    throw new GitHubApiError(401, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.");
  }
  if (typeof payload.exp !== "number" || payload.exp <= now) {
    throw new GitHubApiError(401, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.");
  }
  if (payload.exp - now > 600 || payload.exp - payload.iat > 660) {
    throw new GitHubApiError(401, "'Expiration time' claim ('exp') is too far in the future.");
  }
}
