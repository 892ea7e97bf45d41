import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { viewerFromCookieHeader } from "../../lib/auth/current-viewer";
import type { Viewer } from "../../lib/auth/viewer";
import { db } from "./db";

/** The signed-in viewer of the page being rendered, or null (once per request). */
export const pageViewer = cache(async (): Promise<Viewer | null> => viewerFromCookieHeader(db(), (await headers()).get("cookie")));

/** The viewer, or a redirect to the sign-in page that comes back to `path`. */
export async function requirePageViewer(path: string): Promise<Viewer> {
  const viewer = await pageViewer();
  if (!viewer) redirect(`/signin?callbackUrl=${encodeURIComponent(path)}`);
  return viewer;
}
