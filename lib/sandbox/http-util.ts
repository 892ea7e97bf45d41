import type { IncomingMessage, ServerResponse } from "node:http";
import { GitHubApiError } from "./api-error";

const MAX_BODY = 30 * 1024 * 1024;

export async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new GitHubApiError(413, "Payload too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A JSON body (or an urlencoded form, as browsers and OAuth clients send). */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString("utf8");
  if (contentType?.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GitHubApiError(400, "Problems parsing JSON");
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { "content-type": "application/json; charset=utf-8" } : {}),
    ...headers,
    ...(text ? { "content-length": String(Buffer.byteLength(text)) } : {}),
  });
  res.end(text);
}

export function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "content-length": String(Buffer.byteLength(html)), ...headers });
  res.end(html);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, "content-length": "0" });
  res.end();
}

/** Plain object body check for route handlers. */
export function asObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GitHubApiError(400, "Problems parsing JSON");
  return body as Record<string, unknown>;
}
