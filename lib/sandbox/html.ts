export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** A bare HTML page for the sandbox's web screens. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:70rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.6rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eaeef2;padding:.3rem .4rem;text-align:left;vertical-align:top}
form{display:inline-flex;gap:.3rem;margin:.15rem 0}input,select,button{font:inherit}
.label{display:inline-block;border-radius:1rem;padding:0 .5rem;margin-right:.2rem;font-size:.85em;border:1px solid #0002}
.muted{color:#656d76}.text{white-space:pre-wrap;font:inherit;margin:.3rem 0}.diff{overflow:auto;background:#f6f8fa;padding:.5rem}
.comment{list-style:none;border:1px solid #d0d7de;border-radius:6px;padding:.4rem .6rem;margin:.4rem 0}.comment.bot{border-left:4px solid #0969da}
textarea{font:13px/1.4 ui-monospace,monospace;width:100%}.delivery-failed,.delivery-dropped{color:#cf222e}
</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
