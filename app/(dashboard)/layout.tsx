import Link from "next/link";
import type { ReactNode } from "react";
import { getNeedsCount } from "../../lib/dashboard/queries";
import { NavLinks } from "../_components/nav-links";
import { signOut } from "../_server/auth";
import { dashboardContext } from "../_server/services";
import { pageViewer } from "../_server/viewer";

export const dynamic = "force-dynamic";

async function signOutAction() {
  "use server";
  await signOut({ redirectTo: "/signin" });
}

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const viewer = await pageViewer();
  const needs = viewer ? await getNeedsCount(dashboardContext(), viewer) : 0;
  return (
    <div className="flex min-h-screen flex-col">
      <a href="#main" className="sr-only rounded bg-stone-900 px-3 py-2 text-sm font-medium text-white focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-20">
        Skip to the content
      </a>
      <header className="sticky top-0 z-10 border-b border-stone-200 bg-stone-50/95 backdrop-blur">
        <div className="mx-auto flex max-w-[1600px] flex-wrap items-center gap-x-4 gap-y-2 px-3 py-2 sm:px-5">
          <Link href="/board" className="text-base font-bold tracking-tight">
            Atelier
          </Link>
          <div className="order-3 w-full sm:order-none sm:w-auto sm:flex-1">{viewer ? <NavLinks needsCount={needs} /> : null}</div>
          {viewer ? (
            <div className="ml-auto flex items-center gap-2 text-sm">
              {viewer.avatarUrl ? <img src={viewer.avatarUrl} alt="" width={24} height={24} className="h-6 w-6 rounded-full bg-stone-200" /> : null}
              <span data-testid="viewer-login" className="font-medium">
                {viewer.login}
              </span>
              {viewer.admin ? <span className="rounded bg-stone-200 px-1.5 text-xs text-stone-700">admin</span> : null}
              <form action={signOutAction}>
                <button type="submit" className="rounded px-2 py-1 text-stone-600 hover:bg-stone-200">
                  Sign out
                </button>
              </form>
            </div>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1} className="mx-auto w-full max-w-[1600px] flex-1 px-3 py-4 sm:px-5">{children}</main>
    </div>
  );
}
