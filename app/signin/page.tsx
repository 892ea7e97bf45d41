import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { instanceConfigProblem } from "../../lib/auth/instance-config";
import { resolveGitHubEnv, signInProblem } from "../../lib/github/github-env";
import { db } from "../_server/db";
import { signIn } from "../_server/auth";
import { pageViewer } from "../_server/viewer";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

const ERRORS: Record<string, string> = {
  AccessDenied: "GitHub did not let you in (the sign-in was refused or canceled).",
  OAuthCallbackError: "GitHub's answer to the sign-in could not be used; try again.",
  Configuration: "Sign-in is not configured correctly on this Atelier; the server log says what is wrong.",
  InstanceConfig: "Sign-in is refused while the instance config does not load.",
};

/** Only paths of this site: never an absolute URL (an open redirect). */
function safePath(value: string | undefined): string {
  return value && value.startsWith("/") && !value.startsWith("//") ? value : "/board";
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const target = safePath(typeof sp.callbackUrl === "string" ? sp.callbackUrl : undefined);
  if (await pageViewer()) redirect(target);
  // an own key only: `?error=__proto__` would otherwise render Object.prototype and answer 500
  const error = typeof sp.error === "string" ? (Object.hasOwn(ERRORS, sp.error) ? ERRORS[sp.error]! : "The sign-in did not work; try again.") : null;
  const problem = signInProblem(await resolveGitHubEnv(db())) ?? (await instanceConfigProblem());

  async function signInWithGitHub() {
    "use server";
    await signIn("github", { redirectTo: target });
  }

  return (
    <main className="flex min-h-screen items-center justify-center p-4">
      <div className="w-full max-w-sm rounded-xl border border-stone-200 bg-white p-6 shadow-sm">
        <h1 className="text-2xl font-bold tracking-tight">Atelier</h1>
        <p className="mt-1 text-sm text-stone-600">Coding agents on your issues and pull requests, with a person in charge.</p>
        {error ? (
          <p role="alert" className="mt-4 rounded-md bg-red-50 p-2 text-sm text-red-800">
            {error}
          </p>
        ) : null}
        {problem ? (
          <p role="alert" data-testid="signin-problem" className="mt-4 rounded-md bg-amber-50 p-2 text-sm text-amber-900">
            {problem}
          </p>
        ) : (
          <form action={signInWithGitHub} className="mt-6">
            <button type="submit" data-testid="signin-github" className="w-full rounded-md bg-stone-900 px-4 py-2.5 text-sm font-semibold text-white hover:bg-stone-800">
              Sign in with GitHub
            </button>
          </form>
        )}
        <p className="mt-4 text-xs text-stone-500">You see the repositories you can see on GitHub; acting on one needs write access to it.</p>
      </div>
    </main>
  );
}
