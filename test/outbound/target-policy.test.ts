import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../lib/http/address-class";
import { retryDelayMs, MAX_TRIES, RETRY_DELAYS_SECONDS } from "../../lib/outbound/backoff";
import { signatureHeader, verifySignature } from "../../lib/outbound/signature";
import type { Resolver } from "../../lib/http/resolver";
import { assertWebhookTarget, targetPolicyFor } from "../../lib/outbound/target-policy";

describe("the SSRF guard's address classes", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["10.1.2.3", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["169.254.169.254", "metadata"],
    ["169.254.10.1", "link-local"],
    ["100.100.100.200", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "reserved"],
    ["8.8.8.8", "public"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1%eth0", "link-local"],
    ["fd12:3456::1", "unique-local"],
    ["fd00:ec2::254", "metadata"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "metadata"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::1", "private"],
    ["2606:4700:4700::1111", "public"],
    ["not-an-ip", "reserved"],
  ])("%s is %s", (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });
});

describe("webhook targets", () => {
  const resolveTo =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("refuses private, loopback and metadata targets with a 400 webhook_target_private", async () => {
    const closed = { allowPrivate: false };
    for (const url of ["http://127.0.0.1:8080/x", "http://[::1]/x", "http://169.254.169.254/latest/meta-data", "https://10.0.0.8/"]) {
      await expect(assertWebhookTarget(url, closed)).rejects.toMatchObject({ token: "webhook_target_private", status: 400 });
    }
    // a name with one internal address among public ones is refused whole
    await expect(
      assertWebhookTarget("https://hooks.example.test/", { allowPrivate: false, resolve: resolveTo("93.184.216.34", "192.168.0.9") }),
    ).rejects.toMatchObject({ token: "webhook_target_private", details: { address: "192.168.0.9", class: "private" } });
    await expect(assertWebhookTarget("https://localhost/", closed)).rejects.toMatchObject({ token: "webhook_target_private" });
  });

  it("accepts public targets, and private ones when the instance allows them", async () => {
    await expect(
      assertWebhookTarget("https://hooks.example.test/atelier", { allowPrivate: false, resolve: resolveTo("93.184.216.34") }),
    ).resolves.toBeInstanceOf(URL);
    await expect(assertWebhookTarget("http://127.0.0.1:8080/x", { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    expect(targetPolicyFor({ allowPrivateWebhookTargets: false }, {}).allowPrivate).toBe(false);
    expect(targetPolicyFor({ allowPrivateWebhookTargets: true }, {}).allowPrivate).toBe(true);
    expect(targetPolicyFor(null, { ATELIER_ALLOW_PRIVATE_WEBHOOKS: "1" }).allowPrivate).toBe(true);
  });

  it("refuses what is not an http(s) URL, credentials in it, and names that do not resolve", async () => {
    const open = { allowPrivate: true };
    await expect(assertWebhookTarget("ftp://example.test/", open)).rejects.toMatchObject({ token: "webhook_url_invalid" });
    await expect(assertWebhookTarget("https://user:pw@example.test/", open)).rejects.toMatchObject({ token: "webhook_url_invalid" });
    await expect(assertWebhookTarget("not a url", open)).rejects.toMatchObject({ token: "webhook_url_invalid" });
    await expect(
      assertWebhookTarget("https://nowhere.invalid/", {
        allowPrivate: false,
        resolve: async () => {
          throw new Error("ENOTFOUND");
        },
      }),
    ).rejects.toMatchObject({ token: "webhook_target_unresolvable", status: 400 });
  });
});

describe("signatures and retries", () => {
  it("signs t.<body> with HMAC-SHA256 and verifies only the same body, secret and a fresh time", () => {
    const at = new Date("2026-11-29T12:00:00Z");
    const header = signatureHeader("s3cret-s3cret-s3cret", '{"a":1}', at);
    expect(header).toMatch(/^t=1795953600,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, "s3cret-s3cret-s3cret", '{"a":1}', { now: at })).toBe(true);
    expect(verifySignature(header, "s3cret-s3cret-s3cret", '{"a":2}', { now: at })).toBe(false);
    expect(verifySignature(header, "another-secret-xxxx", '{"a":1}', { now: at })).toBe(false);
    expect(verifySignature(header, "s3cret-s3cret-s3cret", '{"a":1}', { now: new Date(at.getTime() + 3_600_000) })).toBe(false);
  });

  it("tries at least 8 times over at least an hour, backing off exponentially with jitter", () => {
    expect(MAX_TRIES).toBeGreaterThanOrEqual(8);
    const low = Array.from({ length: MAX_TRIES - 1 }, (_, i) => retryDelayMs(i + 1, () => 0)!);
    const high = Array.from({ length: MAX_TRIES - 1 }, (_, i) => retryDelayMs(i + 1, () => 0.999)!);
    expect(low).toEqual(RETRY_DELAYS_SECONDS.map((s) => s * 1000));
    expect(low.slice(1).every((d, i) => d === 2 * low[i]!)).toBe(true);
    expect(low.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3_600_000);
    high.forEach((d, i) => expect(d).toBeLessThanOrEqual(low[i]! * 1.25));
    expect(retryDelayMs(MAX_TRIES)).toBeNull();
  });
});
