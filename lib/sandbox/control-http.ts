import type { IncomingMessage, ServerResponse } from "node:http";
import { CONTROL_METHODS, type ControlMethod, type SimControl } from "./control";
import type { SimCore } from "./core";
import { controlRefusal } from "./control-guard";
import { renderControlPage } from "./control-page";
import { parseBody, readRaw, redirect, sendHtml, sendJson } from "./http-util";
import { stateSummary } from "./state-summary";
import { ITEM_PAGE, sendWebPage } from "./web/pages";

const NUMERIC = new Set(["number", "checkRunId", "installationId", "ms", "count", "retryAfter", "limit", "status", "limitStatus", "perMinute"]);
const LISTS = new Set(["labels", "repos", "repositories"]);

/** An HTML form's strings → the control method's input (numbers, lists, booleans). */
function fromForm(fields: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(fields)) {
    const value = String(raw);
    if (value === "" && key !== "body") continue;
    if (key === "status" && value === "secondary-rate-limit") input[key] = value;
    else if (NUMERIC.has(key)) input[key] = Number(value);
    else if (LISTS.has(key)) input[key] = value.split(",").map((s) => s.trim()).filter(Boolean);
    else if (key === "draft") input[key] = value === "on" || value === "true";
    else if (key === "mergeable") input[key] = value === "null" ? null : value === "true";
    // a textarea sends CRLF line ends: the file gets the LF a person typed
    else if (key === "file") input.files = { [value]: String(fields.content ?? `Changed at ${new Date().toISOString()}\n`).replace(/\r\n/g, "\n") };
    else if (key !== "content" && key !== "_back") input[key] = value;
  }
  return input;
}

/** Where a form comes back to: one of the sandbox's own pages, never elsewhere. */
function backTo(value: unknown): string {
  return typeof value === "string" && /^\/_sim(\/|\?|$)/.test(value) && !value.startsWith("//") ? value : "/_sim";
}

function withMessage(back: string, message: string): string {
  const url = new URL(back, "http://sim");
  url.searchParams.set("message", message);
  return `${url.pathname}${url.search}`;
}

function isMethod(name: string): name is ControlMethod {
  return (CONTROL_METHODS as readonly string[]).includes(name);
}

async function call(control: SimControl, name: ControlMethod, input: Record<string, unknown>): Promise<unknown> {
  const method = control[name] as unknown as (input: Record<string, unknown>) => unknown;
  return await method.call(control, input);
}

function avatar(id: string): string {
  const hue = (Number(id) * 47) % 360;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="hsl(${hue},55%,55%)"/></svg>`;
}

/**
 * `/_sim…`: the control page (`GET /_sim`), its forms (`POST /_sim/form/<method>`), the JSON
 * control API (`POST /_sim/control/<method>` with the method's input as the body), and
 * read-only views: `/_sim/state`, `/_sim/deliveries`, `/_sim/counters`, `/_sim/unknown-requests`.
 */
export async function handleControl(core: SimCore, control: SimControl, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const path = url.pathname.replace(/\/+$/, "") || "/_sim";
  const method = req.method ?? "GET";
  const refusal = controlRefusal(method, req.headers, core.baseUrl);
  if (refusal) {
    req.resume();
    return sendJson(res, 403, { message: refusal });
  }
  if (method === "GET" && path === "/_sim") return sendHtml(res, 200, renderControlPage(core, url.searchParams.get("message")));
  if (method === "GET" && (path === "/_sim/edit" || ITEM_PAGE.test(path))) return sendWebPage(core, res, url);
  if (method === "GET" && path === "/_sim/state") return sendJson(res, 200, stateSummary(core));
  if (method === "GET" && path === "/_sim/deliveries") return sendJson(res, 200, control.deliveries());
  if (method === "GET" && path === "/_sim/counters") return sendJson(res, 200, control.counters);
  if (method === "POST" && path === "/_sim/counters/reset") {
    control.resetCounters();
    return sendJson(res, 200, control.counters);
  }
  if (method === "GET" && path === "/_sim/unknown-requests") return sendJson(res, 200, core.unknownRequests);
  const avatarMatch = /^\/_sim\/avatars\/(\d+)$/.exec(path);
  if (method === "GET" && avatarMatch?.[1]) {
    res.writeHead(200, { "content-type": "image/svg+xml", "cache-control": "max-age=3600" });
    res.end(avatar(avatarMatch[1]));
    return;
  }
  const action = /^\/_sim\/(control|form)\/(\w+)$/.exec(path);
  if (method === "POST" && action?.[1] && action[2]) {
    const name = action[2];
    const isForm = action[1] === "form";
    let back = "/_sim";
    if (!isMethod(name)) return sendJson(res, 404, { message: `no control method ${name}`, methods: CONTROL_METHODS });
    try {
      const body = parseBody(await readRaw(req), req.headers["content-type"]) ?? {};
      const input = isForm ? fromForm(body as Record<string, unknown>) : (body as Record<string, unknown>);
      back = isForm ? backTo((body as Record<string, unknown>)._back) : back;
      const result = await call(control, name, input);
      if (isForm) return redirect(res, withMessage(back, `${name}: done`));
      return sendJson(res, 200, result ?? { ok: true });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (isForm) return redirect(res, withMessage(back, `${name} failed: ${message}`));
      return sendJson(res, 400, { message });
    }
  }
  sendJson(res, 404, { message: `no control endpoint ${method} ${path}` });
}
