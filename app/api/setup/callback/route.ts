import { completeAppRegistration } from "../../../../lib/setup/register-app";
import { clearSetupCookieHeader, setupCookieOf } from "../../../../lib/setup/setup-state";
import { setupDeps, setupProblem } from "../setup-deps";

export const dynamic = "force-dynamic";

/** GitHub's redirect after it created the App: exchanges the code, stores the credentials. */
export async function GET(request: Request): Promise<Response> {
  try {
    const url = new URL(request.url);
    const deps = setupDeps();
    await completeAppRegistration(deps, {
      code: url.searchParams.get("code") ?? "",
      state: url.searchParams.get("state") ?? "",
      cookie: setupCookieOf(request.headers.get("cookie")),
    });
    return new Response(null, {
      status: 303,
      headers: { location: `${deps.publicUrl}/setup?registered=1`, "set-cookie": clearSetupCookieHeader(), "cache-control": "no-store" },
    });
  } catch (err) {
    return setupProblem(err);
  }
}
