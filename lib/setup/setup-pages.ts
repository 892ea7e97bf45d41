import type { StartedRegistration } from "./register-app";

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/**
 * The page that hands the manifest to GitHub: a form posted to GitHub's new-App page as soon
 * as it loads (a button too, for a browser without scripts). GitHub takes the manifest only as
 * a posted form field named `manifest`.
 */
export function manifestPostPage(started: StartedRegistration, nonce: string | null = null): string {
  // the Content-Security-Policy (proxy.ts) runs an inline script only with the request's nonce
  const nonceAttr = nonce && /^[A-Za-z0-9+/=]{8,100}$/.test(nonce) ? ` nonce="${nonce}"` : "";
  const manifest = escapeHtml(JSON.stringify(started.manifest));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Register Atelier on GitHub</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<form id="manifest" method="post" action="${escapeHtml(started.action)}">
<input type="hidden" name="manifest" value="${manifest}">
<p>Taking you to GitHub to create the App <strong>${escapeHtml(started.manifest.name)}</strong>…</p>
<button type="submit">Continue to GitHub</button>
</form>
<script${nonceAttr}>document.getElementById("manifest").submit();</script>
</body></html>`;
}

/** A refusal of the registration, said plainly, with the way back to the setup page. */
export function setupProblemPage(message: string, token: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Atelier setup</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<h1>The GitHub App was not registered</h1>
<p role="alert">${escapeHtml(message)}</p>
<p><code>${escapeHtml(token)}</code></p>
<p><a href="/setup">Back to the setup page</a></p>
</body></html>`;
}
