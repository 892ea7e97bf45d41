import { createHash, randomBytes } from "node:crypto";
import { ForbiddenError } from "../errors";
import type { Db } from "../store/kernel/db";
import { isSetupTokenHash, replaceSetupToken, spendSetupTokenHash } from "../store/github/setup-tokens";

/**
 * The one-time setup token (as Grafana's and Jenkins's first start do): the web process makes
 * one when it starts with no GitHub App and prints where to open /setup with it. Postgres keeps
 * only its SHA-256, so every part of the web process (and every web process) checks the same
 * one; it is spent by the registration it starts, and gone once an App is stored.
 */
const hashOf = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

/** A fresh token, replacing the one an earlier start printed. */
export async function issueSetupToken(db: Db): Promise<string> {
  const token = randomBytes(24).toString("base64url");
  await replaceSetupToken(db, hashOf(token));
  return token;
}

/** Whether `token` is the setup token now (without spending it). */
export async function isSetupToken(db: Db, token: string | null | undefined): Promise<boolean> {
  if (!token) return false;
  return isSetupTokenHash(db, hashOf(token));
}

/** Spends the token: true for the one caller that held it, false for every later one. */
export async function spendSetupToken(db: Db, token: string | null | undefined): Promise<boolean> {
  if (!token) return false;
  return spendSetupTokenHash(db, hashOf(token));
}

export const setupTokenRequired = () =>
  new ForbiddenError(
    "setup_token_required",
    "Only the operator may register the GitHub App: open the /setup?token=… link the web process printed when it started (it works once; restart for a new one), or sign in as an instance admin.",
  );
