import { authSecret } from "../../../lib/auth/auth-secret";
import { secretKey } from "../../../lib/secrets/secret-key";
import { toHttpError } from "../../../lib/errors";
import type { SetupDeps } from "../../../lib/setup/register-app";
import { publicUrl } from "../../../lib/setup/public-url";
import { setupProblemPage } from "../../../lib/setup/setup-pages";
import { db } from "../../_server/db";

/** What the setup routes need: the database, the cookie-signing secret, the credentials' key, the public URL. */
export function setupDeps(): SetupDeps {
  return { db: db(), secret: authSecret(), secretKey: secretKey(), publicUrl: publicUrl() };
}

export const HTML = { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" };

/** Any refusal of the setup routes as a page a person reads (secrets never reach it). */
export function setupProblem(err: unknown): Response {
  const http = toHttpError(err);
  if (http.status >= 500 && http.body.error === "internal") console.error(`atelier: setup error: ${(err as Error)?.stack ?? String(err)}`);
  return new Response(setupProblemPage(http.body.message, http.body.error), { status: http.status, headers: { ...HTML, ...http.headers } });
}
