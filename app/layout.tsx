import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { instanceConfig } from "../lib/auth/instance-config";
import { unconfinedAgentsWarning } from "../lib/dashboard/sandbox-banner";
import { noLiveWorkerWarning } from "../lib/dashboard/workers";
import { db } from "./_server/db";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Atelier", template: "%s · Atelier" },
  description: "Coding agents on your issues and pull requests, with a person in charge.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export const dynamic = "force-dynamic";

async function unconfinedWarning(): Promise<string | null> {
  try {
    return unconfinedAgentsWarning(await instanceConfig());
  } catch {
    return null; // an instance config that does not parse says so on the pages that read it
  }
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  const [warning, noWorker] = await Promise.all([unconfinedWarning(), noLiveWorkerWarning(db())]);
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        {warning ? (
          <div role="alert" data-testid="unconfined-banner" className="bg-red-700 px-4 py-2 text-center text-sm font-semibold text-white">
            {warning}
          </div>
        ) : null}
        {noWorker ? (
          <div role="status" data-testid="no-worker-banner" className="bg-amber-500 px-4 py-2 text-center text-sm font-semibold text-stone-900">
            {noWorker}
          </div>
        ) : null}
        {children}
      </body>
    </html>
  );
}
