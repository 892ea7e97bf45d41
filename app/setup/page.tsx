import type { Metadata } from "next";
import type { ReactNode } from "react";
import { gitHubEnv } from "../../lib/github/github-env";
import { DEFAULT_APP_NAME } from "../../lib/setup/manifest";
import { publicUrl } from "../../lib/setup/public-url";
import { setupInSandbox, setupStatus } from "../../lib/setup/register-app";
import { isSetupToken, setupTokenRequired } from "../../lib/setup/setup-token";
import { db } from "../_server/db";
import { pageViewer } from "../_server/viewer";

export const metadata: Metadata = { title: "Set up the GitHub App" };
export const dynamic = "force-dynamic";

function Card({ children }: { children: ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <div className="w-full max-w-lg rounded-xl border border-stone-200 bg-white p-6 shadow-sm">{children}</div>
    </main>
  );
}

/** A refusal of the setup page, with its token. */
function Refused({ error }: { error: { token: string; message: string } }) {
  return (
    <Card>
      <h1 className="text-xl font-semibold tracking-tight">Set up the GitHub App</h1>
      <p role="alert" data-testid="setup-refused" className="mt-2 text-sm text-stone-700">
        {error.message}
      </p>
      <p className="mt-2 text-xs text-stone-500">
        <code>{error.token}</code>
      </p>
    </Card>
  );
}

/**
 * With no GitHub App, offers its operator (the holder of the setup token printed at start, or
 * a signed-in instance admin) to register one from Atelier's manifest (on github.com or a
 * GitHub Enterprise Server); once registered, shows where to install it. The App's key and
 * secrets are never shown.
 */
export default async function SetupPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const status = await setupStatus(db());

  if (status.tag === "FromEnvironment") {
    return (
      <Card>
        <h1 className="text-xl font-semibold tracking-tight">GitHub App</h1>
        <p data-testid="setup-env" className="mt-2 text-sm text-stone-700">
          Atelier uses the GitHub App its environment names (GITHUB_APP_ID {status.appId}). Install it on your repositories from the App&apos;s page on GitHub.
        </p>
      </Card>
    );
  }

  if (status.tag === "Registered") {
    const r = status.registration;
    return (
      <Card>
        <h1 className="text-xl font-semibold tracking-tight">{sp.registered ? "The GitHub App is registered" : "GitHub App"}</h1>
        <p className="mt-2 text-sm text-stone-700">
          Atelier is registered as <a className="font-medium underline" href={r.htmlUrl}>{r.slug}</a> (App {r.appId}). Its private key and secrets are stored in
          Atelier&apos;s database and are not shown again.
        </p>
        <a data-testid="setup-install" href={r.installUrl} className="mt-4 inline-block rounded-md bg-stone-900 px-4 py-2.5 text-sm font-semibold text-white hover:bg-stone-800">
          Install the App on your repositories
        </a>
        <p className="mt-4 text-xs text-stone-500">Restart Atelier (web and worker) so that both use the new App.</p>
      </Card>
    );
  }

  if (status.sandbox) return <Refused error={setupInSandbox()} />;
  const token = typeof sp.token === "string" ? sp.token : null;
  if (!(await pageViewer())?.admin && !(await isSetupToken(db(), token))) return <Refused error={setupTokenRequired()} />;

  const suggestedServer = gitHubEnv().webUrl;
  return (
    <Card>
      <h1 className="text-xl font-semibold tracking-tight">Register Atelier on GitHub</h1>
      <p className="mt-2 text-sm text-stone-700">
        Atelier needs a GitHub App. GitHub creates it from Atelier&apos;s manifest: its webhook goes to {publicUrl()}/api/github/webhooks, and it asks for
        issues, pull requests, contents and checks (write), metadata and members (read).
      </p>
      <form method="post" action="/api/setup/start" className="mt-4 space-y-3 text-sm">
        {token ? <input type="hidden" name="token" value={token} /> : null}
        <fieldset className="space-y-1">
          <legend className="font-medium">Where</legend>
          <label className="flex items-center gap-2">
            <input type="radio" name="github" value="github.com" defaultChecked /> github.com
          </label>
          <label className="flex items-center gap-2">
            <input type="radio" name="github" value="enterprise" /> GitHub Enterprise Server at
            <input
              name="enterpriseUrl"
              type="url"
              placeholder="https://github.example.com"
              defaultValue={suggestedServer === "https://github.com" ? "" : suggestedServer}
              className="flex-1 rounded border border-stone-300 px-2 py-1"
            />
          </label>
        </fieldset>
        <label className="block">
          <span className="font-medium">Organization</span> <span className="text-stone-500">(optional: the App belongs to it instead of your account)</span>
          <input name="organization" className="mt-1 w-full rounded border border-stone-300 px-2 py-1" />
        </label>
        <label className="block">
          <span className="font-medium">App name</span>
          <input name="name" defaultValue={DEFAULT_APP_NAME} maxLength={34} className="mt-1 w-full rounded border border-stone-300 px-2 py-1" />
        </label>
        <button type="submit" data-testid="setup-register" className="w-full rounded-md bg-stone-900 px-4 py-2.5 font-semibold text-white hover:bg-stone-800">
          Register the GitHub App
        </button>
      </form>
    </Card>
  );
}
