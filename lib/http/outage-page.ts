import { outageError, toHttpError } from "../errors";

/** What a dashboard page answers while Postgres cannot be reached: 503 `database_unavailable`, Retry-After, a page that says so. */
export function databaseOutagePage(): { status: number; headers: Record<string, string>; html: string } {
  const http = toHttpError(outageError("database"));
  // the sentence and the token are Atelier's own constants: nothing here comes from a request
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Atelier is unavailable</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem">
<h1>Atelier is unavailable</h1>
<p role="alert">${http.body.message}</p>
<p><code>${http.body.error}</code></p>
<p>This page is worth a reload in ${http.headers["retry-after"]} seconds.</p>
</body></html>`;
  return { status: http.status, headers: { ...http.headers, "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }, html };
}
