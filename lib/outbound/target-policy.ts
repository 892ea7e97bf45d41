import { isIP } from "node:net";
import type { InstanceConfig } from "../config/roster";
import { BadInputError } from "../errors";
import { classifyAddress } from "../http/address-class";
import { systemResolver, type ResolvedAddress, type TargetPolicy } from "../http/resolver";

/**
 * Where a webhook may be sent. A URL is checked when it is subscribed AND again at every
 * delivery, on the addresses the connection will actually use (a name can be re-pointed at an
 * internal address after it was checked — DNS rebinding). Private, loopback, link-local,
 * multicast, unique-local, metadata and reserved addresses are refused unless the instance
 * allows private targets (`allow_private_webhook_targets`, or ATELIER_ALLOW_PRIVATE_WEBHOOKS=1).
 */

export function targetPolicyFor(
  config: Pick<InstanceConfig, "allowPrivateWebhookTargets"> | null,
  env: NodeJS.ProcessEnv = process.env,
): TargetPolicy {
  return { allowPrivate: env.ATELIER_ALLOW_PRIVATE_WEBHOOKS === "1" || config?.allowPrivateWebhookTargets === true };
}

export const MAX_URL_LENGTH = 2000;

/** Parses a webhook URL: http(s), a host, no credentials. BadInputError `webhook_url_invalid` otherwise. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BadInputError("webhook_url_invalid", `"${text.slice(0, 200)}" is not a URL; give a full https:// address.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new BadInputError("webhook_url_invalid", `A webhook URL must be http:// or https://, not ${url.protocol}//.`);
  }
  if (url.username || url.password) {
    throw new BadInputError("webhook_url_invalid", "A webhook URL cannot carry a user name or password; the signature authenticates Atelier.");
  }
  if (text.length > MAX_URL_LENGTH) {
    throw new BadInputError("webhook_url_invalid", `A webhook URL is at most ${MAX_URL_LENGTH} characters.`);
  }
  return url;
}

/** The URL's host without IPv6 brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** Who asks for a host's addresses, for the refusal: its tokens' stem, its noun, what to set instead. */
export interface AddressSubject {
  /** `<stem>_private`, `<stem>_unresolvable`: both tokens of lib/error-tokens.ts. */
  stem: "webhook_target" | "github_url";
  /** "The webhook host". */
  noun: string;
  /** The sentence's end: where only public addresses are reached, and the setting that allows the others. */
  advice: string;
}

const WEBHOOK_TARGET: AddressSubject = {
  stem: "webhook_target",
  noun: "The webhook host",
  advice: "Atelier sends webhooks only to public addresses unless the instance sets allow_private_webhook_targets.",
};

/**
 * The addresses a host stands for, each one allowed by the policy; BadInputError
 * `webhook_target_private` when any is not (a name with one internal address is refused
 * whole), `webhook_target_unresolvable` when the name does not resolve (other stems for other
 * subjects).
 */
export async function checkedAddresses(host: string, policy: TargetPolicy, subject: AddressSubject = WEBHOOK_TARGET): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch (err) {
      throw new BadInputError(`${subject.stem}_unresolvable`, `${subject.noun} ${host} does not resolve (${(err as Error).message}).`, { host });
    }
    if (!addresses.length) throw new BadInputError(`${subject.stem}_unresolvable`, `${subject.noun} ${host} has no address.`, { host });
  }
  if (policy.allowPrivate) return addresses;
  for (const a of addresses) {
    const cls = classifyAddress(a.address);
    if (cls !== "public") {
      throw new BadInputError(
        `${subject.stem}_private`,
        `${subject.noun} ${host} is ${a.address === host ? "" : `at ${a.address}, `}a ${cls} address; ${subject.advice}`,
        { host, address: a.address, class: cls },
      );
    }
  }
  return addresses;
}

/** Checks a webhook URL at subscription time: well-formed, and every address it resolves to allowed. */
export async function assertWebhookTarget(text: string, policy: TargetPolicy): Promise<URL> {
  const url = parseWebhookUrl(text);
  await checkedAddresses(bareHost(url), policy);
  return url;
}
