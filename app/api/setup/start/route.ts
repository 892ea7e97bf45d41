import { z } from "zod";
import { assertSameOrigin } from "../../../../lib/auth/csrf";
import { viewerFromCookieHeader } from "../../../../lib/auth/current-viewer";
import { BadInputError } from "../../../../lib/errors";
import { startAppRegistration } from "../../../../lib/setup/register-app";
import { manifestPostPage } from "../../../../lib/setup/setup-pages";
import { setupCookieHeader } from "../../../../lib/setup/setup-state";
import { HTML, setupDeps, setupProblem } from "../setup-deps";

export const dynamic = "force-dynamic";

const form = z.strictObject({
  github: z.enum(["github.com", "enterprise"]).default("github.com"),
  enterpriseUrl: z.string().max(500).optional(),
  organization: z.string().max(39).optional(),
  name: z.string().max(100).optional(),
  token: z.string().max(200).optional(),
});

/**
 * The setup form: builds the manifest and hands it to GitHub's new-App page — for the holder of
 * the setup token (a hidden field of the form) or a signed-in instance admin only.
 */
export async function POST(request: Request): Promise<Response> {
  try {
    assertSameOrigin(request.method, request.headers);
    // a body that is not a form (JSON, plain text) makes formData() throw: refused as a form that is not valid
    const fields = await request.formData().catch(() => null);
    if (!fields) throw new BadInputError("invalid_form", "The setup form is not valid: send it as a form (application/x-www-form-urlencoded or multipart/form-data).");
    const parsed = form.safeParse(Object.fromEntries(fields));
    if (!parsed.success) throw new BadInputError("invalid_form", `The setup form is not valid: ${parsed.error.issues.map((i) => i.message).join("; ")}.`);
    const deps = setupDeps();
    const viewer = await viewerFromCookieHeader(deps.db, request.headers.get("cookie"));
    const started = await startAppRegistration(
      deps,
      {
        githubUrl: parsed.data.github === "enterprise" ? (parsed.data.enterpriseUrl ?? "") : null,
        organization: parsed.data.organization ?? null,
        name: parsed.data.name ?? null,
      },
      { viewer, token: parsed.data.token ?? null },
    );
    return new Response(manifestPostPage(started, request.headers.get("x-nonce")), { headers: { ...HTML, "set-cookie": setupCookieHeader(started.cookie, deps.publicUrl) } });
  } catch (err) {
    return setupProblem(err);
  }
}
