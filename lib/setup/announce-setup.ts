import type { Db } from "../store/kernel/db";
import { setupStatus } from "./register-app";
import { issueSetupToken } from "./setup-token";

/**
 * At the web process's start: with no GitHub App (and no sandbox), a fresh setup token and the
 * one line that says where to use it — the only place the token is ever shown. Returns the
 * token, or null when there is nothing to set up.
 */
export async function announceSetup(db: Db, publicUrl: string, print: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const status = await setupStatus(db, env);
  if (status.tag !== "NotRegistered" || status.sandbox) return null;
  const token = await issueSetupToken(db);
  print(`atelier: no GitHub App yet: open ${publicUrl}/setup?token=${token} to register one (the link works once; each start prints a new one)`);
  return token;
}
