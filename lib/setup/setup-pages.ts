import type { StartedRegistration } from "./register-app";

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/**
 * The page that hands the manifest to GitHub: a form posted to GitHub's new-App page (GitHub
 * takes the manifest only as a posted form field named `manifest`). The page says which host
 * it goes to; it posts itself as soon as it loads only for github.com — a GitHub Enterprise
 * Server is used once the person has read its host and pressed the button.
 */
export function manifestPostPage(started: StartedRegistration, nonce: string | null = null): string {
  // the Content-Security-Policy (proxy.ts) runs an inline script only with the request's nonce
  const nonceAttr = nonce && /^[A-Za-z0-9+/=]{8,100}$/.test(nonce) ? ` nonce="${nonce}"` : "";
  const manifest = escapeHtml(JSON.stringify(started.manifest));
  const host = new URL(started.host.webUrl).host;
  const onGitHubCom = host === "github.com";
  const autoSubmit = onGitHubCom ? `\n<script${nonceAttr}>document.getElementById("manifest").submit();</script>` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Register Atelier on GitHub</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<form id="manifest" method="post" action="${escapeHtml(started.action)}">
<input type="hidden" name="manifest" value="${manifest}">
<p>${onGitHubCom ? "Taking you to" : "You are about to register on"} <strong data-host>${escapeHtml(host)}</strong> to create the App <strong>${escapeHtml(started.manifest.name)}</strong>${onGitHubCom ? "…" : `: its API (${escapeHtml(started.host.apiUrl)}) will hand Atelier the App's private key. Continue only if this is your GitHub Enterprise Server.`}</p>
<button type="submit">Continue to ${escapeHtml(host)}</button>
</form>${autoSubmit}
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
