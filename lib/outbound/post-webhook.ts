import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { AtelierError } from "../errors";
import type { TargetPolicy } from "../http/resolver";
import { bareHost, checkedAddresses, parseWebhookUrl } from "./target-policy";

/**
 * One POST of a webhook body. The connection goes only to addresses the target policy allowed,
 * checked in the connection's own name lookup (so the name cannot resolve one way for the
 * check and another for the connection). No redirect is followed; the whole exchange is cut
 * at the timeout; at most 4 KB of the answer is read, for the delivery log.
 */

export const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 4096;

export interface PostResult {
  /** the receiver's HTTP status; null when no answer came */
  status: number | null;
  ok: boolean;
  /** why it failed, for the delivery log; null when it succeeded */
  error: string | null;
  /** a refusal of the target itself (webhook_target_private …), not a failure of the receiver */
  refusal: AtelierError | null;
}

function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, policy).then(
      (addresses) => {
        const wanted = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
        const list = wanted.length ? wanted : addresses;
        if (options.all) callback(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

export async function postWebhook(
  target: string,
  body: string,
  headers: Record<string, string>,
  policy: TargetPolicy,
  timeoutMs: number = DELIVERY_TIMEOUT_MS,
): Promise<PostResult> {
  let url: URL;
  try {
    url = parseWebhookUrl(target);
    // an IP literal is never looked up by the connection: check it here
    if (isIP(bareHost(url))) await checkedAddresses(bareHost(url), policy);
  } catch (err) {
    if (err instanceof AtelierError) return refused(err);
    throw err;
  }
  return new Promise<PostResult>((resolve) => {
    const transport = url.protocol === "https:" ? https : http;
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = transport.request(
      url,
      {
        method: "POST",
        agent: false,
        lookup: guardedLookup(policy),
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "Atelier-Webhooks/1", ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          if (size < MAX_ANSWER_BYTES) chunks.push(c);
          size += c.length;
          if (size >= MAX_ANSWER_BYTES) res.destroy();
        });
        const finish = () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          const text = Buffer.concat(chunks).toString("utf8").slice(0, 500).trim();
          const why = status >= 300 && status < 400 ? "redirects are not followed" : text;
          done({ status, ok, error: ok ? null : `HTTP ${status}${why ? `: ${why}` : ""}`, refusal: null });
        };
        res.on("end", finish);
        res.on("close", finish);
        res.on("error", finish);
      },
    );
    const limit = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${limit}`)), timeoutMs);
    req.on("error", (err) => {
      if (err instanceof AtelierError) done(refused(err));
      else done({ status: null, ok: false, error: err.message || String(err), refusal: null });
    });
    req.end(body);
  });
}

const refused = (err: AtelierError): PostResult => ({ status: null, ok: false, error: `${err.token}: ${err.message}`, refusal: err });
