import { isIP } from "node:net";

/**
 * Which kind of address an IP is, for the webhook SSRF guard. Pure: parses the address itself
 * (IPv4, IPv6, IPv4 embedded in IPv6) and matches it against the ranges a webhook must never
 * reach from inside the network Atelier runs in.
 */
export type AddressClass =
  | "public"
  | "unspecified"
  | "private"
  | "loopback"
  | "link-local"
  | "multicast"
  | "unique-local"
  | "metadata"
  | "reserved";

interface Range {
  base: bigint;
  bits: number;
  cls: AddressClass;
}

const v4 = (a: string): bigint => a.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);

/** 8 groups of 16 bits; handles `::` and a trailing dotted IPv4. */
function v6(a: string): bigint {
  let text = a.toLowerCase().split("%")[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === null ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || "0", 16)), 0n);
}

const range4 = (cidr: string, cls: AddressClass): Range => {
  const [base, bits] = cidr.split("/");
  return { base: v4(base!), bits: Number(bits), cls };
};
const range6 = (cidr: string, cls: AddressClass): Range => {
  const [base, bits] = cidr.split("/");
  return { base: v6(base!), bits: Number(bits), cls };
};

// Most specific first: the metadata endpoints sit inside wider ranges.
const V4_RANGES: Range[] = [
  range4("169.254.169.254/32", "metadata"), // AWS, GCP, Azure, OpenStack
  range4("168.63.129.16/32", "metadata"), // Azure wire server
  range4("100.100.100.200/32", "metadata"), // Alibaba Cloud
  range4("0.0.0.0/8", "unspecified"),
  range4("10.0.0.0/8", "private"),
  range4("100.64.0.0/10", "private"), // carrier-grade NAT
  range4("127.0.0.0/8", "loopback"),
  range4("169.254.0.0/16", "link-local"),
  range4("172.16.0.0/12", "private"),
  range4("192.0.0.0/24", "reserved"),
  range4("192.0.2.0/24", "reserved"),
  range4("192.168.0.0/16", "private"),
  range4("198.18.0.0/15", "reserved"),
  range4("198.51.100.0/24", "reserved"),
  range4("203.0.113.0/24", "reserved"),
  range4("224.0.0.0/4", "multicast"),
  range4("240.0.0.0/4", "reserved"), // and 255.255.255.255
];

const V6_RANGES: Range[] = [
  range6("fd00:ec2::254/128", "metadata"), // AWS over IPv6
  range6("::/128", "unspecified"),
  range6("::1/128", "loopback"),
  range6("fe80::/10", "link-local"),
  range6("fec0::/10", "private"), // deprecated site-local
  range6("fc00::/7", "unique-local"),
  range6("ff00::/8", "multicast"),
  range6("2001:db8::/32", "reserved"),
  range6("100::/64", "reserved"),
  range6("2001::/32", "reserved"), // Teredo: an obfuscated IPv4 inside
  range6("2001::/23", "reserved"), // IETF protocol assignments (ORCHID, AMT, …)
  range6("3fff::/20", "reserved"), // documentation (RFC 9637)
];

/**
 * Global unicast: the only IPv6 space a webhook may go to, unless a range is explicitly
 * allowed. Outside it: IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and the local-use
 * 64:ff9b:1::/48 (RFC 8215, an operator's own translator), and everything not yet assigned.
 */
const GLOBAL_UNICAST = range6("2000::/3", "public");

const inRange = (n: bigint, width: number, r: Range): boolean => {
  const shift = BigInt(width - r.bits);
  return n >> shift === r.base >> shift;
};

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4), or null. */
function embeddedV4(n: bigint): bigint | null {
  const top96 = n >> 32n;
  if (top96 === 0xffffn || top96 === 0n) return n & 0xffffffffn; // ::ffff:a.b.c.d, ::a.b.c.d
  if (top96 === 0x0064ff9b0000000000000000n) return n & 0xffffffffn; // 64:ff9b::/96
  if (n >> 112n === 0x2002n) return (n >> 80n) & 0xffffffffn; // 2002:AABB:CCDD::/48
  return null;
}

/** An IPv6 range given as CIDR text ("64:ff9b::/96"), or null when it is not one. */
function parseRange6(cidr: string): Range | null {
  const [base, bits] = cidr.split("/");
  if (!base || isIP(base) !== 6 || !/^\d{1,3}$/.test(bits ?? "") || Number(bits) > 128) return null;
  return range6(cidr, "public");
}

function classify4(n: bigint): AddressClass {
  return V4_RANGES.find((r) => inRange(n, 32, r))?.cls ?? "public";
}

export interface ClassifyOptions {
  /**
   * IPv6 ranges (CIDR) outside 2000::/3 that count as public all the same: an operator's
   * NAT64 prefix, say. Nothing is allowed there by default.
   */
  allowV6?: readonly string[];
}

/**
 * The class of an IP address; "reserved" for anything that is not an IP. An IPv6 address is
 * public only inside global unicast (2000::/3) and outside the special ranges there; an IPv4
 * address carried in IPv6 (mapped ::ffff:0:0/96, compatible, NAT64 64:ff9b::/96) is never
 * public — it is classed as its IPv4 when that is not public, else "reserved" — except 6to4,
 * which is global unicast and classed as its IPv4.
 */
export function classifyAddress(address: string, options: ClassifyOptions = {}): AddressClass {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return classify4(v4(address));
  if (family !== 6) return "reserved";
  const n = v6(address);
  const exact = V6_RANGES.find((r) => inRange(n, 128, r));
  if (exact) return exact.cls;
  const inner = embeddedV4(n);
  const global = inRange(n, 128, GLOBAL_UNICAST);
  if (inner !== null) {
    const cls = classify4(inner);
    if (cls !== "public") return cls;
    if (global) return "public"; // 6to4 of a public IPv4
  }
  if (global) return "public";
  const allowed = (options.allowV6 ?? []).map(parseRange6).some((r) => r !== null && inRange(n, 128, r));
  return allowed ? "public" : "reserved";
}
