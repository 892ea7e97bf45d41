import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../lib/http/address-class";

// The SSRF guard's IPv6 (THREATS.md): public only inside global unicast 2000::/3; IPv4-mapped
// (::ffff:0:0/96), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) and everything else
// outside 2000::/3 refused unless explicitly allowed.

describe("IPv6 outside global unicast", () => {
  it.each([
    // IPv4-mapped: never public, whatever IPv4 it carries
    ["::ffff:8.8.8.8", "reserved"],
    ["::ffff:0808:0808", "reserved"],
    ["::ffff:0:0", "unspecified"],
    ["::ffff:ffff:ffff", "reserved"],
    ["0:0:0:0:0:ffff:1.1.1.1", "reserved"],
    ["::FFFF:8.8.4.4", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:192.168.0.1", "private"],
    // IPv4-compatible (deprecated)
    ["::8.8.8.8", "reserved"],
    ["::127.0.0.1", "loopback"],
    // NAT64, well-known and local-use
    ["64:ff9b::8.8.8.8", "reserved"],
    ["64:ff9b::808:808", "reserved"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::169.254.169.254", "metadata"],
    ["64:ff9b:1::1", "reserved"],
    ["64:ff9b:1::8.8.8.8", "reserved"],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "reserved"],
    ["64:ff9b:2::1", "reserved"],
    // other space outside 2000::/3
    ["::2", "unspecified"], // ::0.0.0.2
    ["::1:0:0:0", "reserved"],
    ["1::1", "reserved"],
    ["100::1", "reserved"],
    ["100:0:0:1::1", "reserved"],
    ["400::1", "reserved"],
    ["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"],
    ["4000::1", "reserved"],
    ["8000::1", "reserved"],
    ["e000::1", "reserved"],
    ["fbff::1", "reserved"],
    ["fc00::1", "unique-local"],
    ["fdff:ffff::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["ff05::1:3", "multicast"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:1", "loopback"],
  ])("%s is %s", (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });
});

describe("IPv6 inside 2000::/3", () => {
  it.each([
    ["2000::1", "public"],
    ["2606:4700:4700::1111", "public"],
    ["2001:4860:4860::8888", "public"],
    ["2a00:1450:4001:80b::200e", "public"],
    ["3ffe::1", "public"],
    ["3fff::1", "reserved"], // documentation (RFC 9637)
    ["3fff:fff:ffff::1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["2001:0db8:ffff::1", "reserved"],
    ["2001::1", "reserved"], // Teredo
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
    ["2001:10::1", "reserved"], // ORCHID
    ["2001:20::1", "reserved"], // ORCHIDv2
    ["2001:1ff::1", "reserved"],
    ["2001:200::1", "public"],
    ["2002:0808:0808::1", "public"], // 6to4 of 8.8.8.8
    ["2002:c0a8:0101::1", "private"], // 6to4 of 192.168.1.1
    ["2002:7f00:1::1", "loopback"],
    ["2002:a9fe:a9fe::1", "metadata"],
    ["fd00:ec2::254", "metadata"],
  ])("%s is %s", (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });
});

describe("explicitly allowed IPv6 ranges", () => {
  it("an operator's NAT64 prefix counts as public only when allowed, and only inside that range", () => {
    expect(classifyAddress("64:ff9b:1::abcd", { allowV6: ["64:ff9b:1::/48"] })).toBe("public");
    expect(classifyAddress("64:ff9b:2::abcd", { allowV6: ["64:ff9b:1::/48"] })).toBe("reserved");
    expect(classifyAddress("4000::1", { allowV6: ["4000::/16"] })).toBe("public");
  });

  it("an allowance never lifts a private, loopback or metadata class", () => {
    expect(classifyAddress("::1", { allowV6: ["::/0"] })).toBe("loopback");
    expect(classifyAddress("fd00::1", { allowV6: ["::/0"] })).toBe("unique-local");
    expect(classifyAddress("::ffff:10.0.0.1", { allowV6: ["::/0"] })).toBe("private");
    expect(classifyAddress("64:ff9b::169.254.169.254", { allowV6: ["64:ff9b::/96"] })).toBe("metadata");
  });

  it("a malformed allowance allows nothing", () => {
    for (const bad of ["", "64:ff9b::", "64:ff9b::/129", "nonsense/8", "10.0.0.0/8"]) {
      expect(classifyAddress("64:ff9b:1::1", { allowV6: [bad] })).toBe("reserved");
    }
  });

  it("IPv4 is unchanged, and a non-IP is reserved", () => {
    expect(classifyAddress("8.8.8.8")).toBe("public");
    expect(classifyAddress("10.0.0.1")).toBe("private");
    expect(classifyAddress("example.com")).toBe("reserved");
    expect(classifyAddress("::ffff:8.8.8.8.8")).toBe("reserved");
    expect(classifyAddress("")).toBe("reserved");
  });
});
