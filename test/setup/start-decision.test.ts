import { describe, expect, it } from "vitest";
import { isLocalUrl, startDecision } from "../../lib/setup/start-decision";

// THREATS.md, attack 21: the simulator started whenever no App was configured, so an instance
// meant for GitHub could silently run against a fake one. It runs only on purpose now.

describe("what npm start runs against", () => {
  it("runs the sandbox with no App only when the public URL is local, or with ATELIER_SANDBOX=1", () => {
    expect(startDecision("none", {})).toEqual({ run: "sandbox" }); // http://localhost:3000
    for (const url of ["http://localhost:3000", "http://127.0.0.1:8080/", "http://[::1]:3000", "http://LOCALHOST"]) {
      expect(startDecision("none", { ATELIER_PUBLIC_URL: url }), url).toEqual({ run: "sandbox" });
    }
    expect(startDecision("none", { ATELIER_PUBLIC_URL: "https://atelier.example.com", ATELIER_SANDBOX: "1" })).toEqual({ run: "sandbox" });
    expect(startDecision("database", { ATELIER_SANDBOX: "1" })).toEqual({ run: "sandbox" });
  });

  it("stops with one sentence when the public URL is not local and there is no App", () => {
    for (const url of ["https://atelier.example.com", "http://10.0.0.5:3000", "http://127.0.0.2:3000", "http://localhost.evil.example", "http://0.0.0.0:3000"]) {
      const decision = startDecision("none", { ATELIER_PUBLIC_URL: url });
      expect(decision, url).toHaveProperty("refuse");
      const sentence = (decision as { refuse: string }).refuse;
      expect(sentence).toContain("is not local");
      expect(sentence.split("\n")).toHaveLength(1);
    }
  });

  it("uses a configured App, and ATELIER_SANDBOX=0 starts with none to register it from /setup", () => {
    expect(startDecision("env", { ATELIER_SANDBOX: "1", ATELIER_PUBLIC_URL: "https://a.example" })).toEqual({ run: "env" });
    expect(startDecision("database", { ATELIER_PUBLIC_URL: "https://a.example" })).toEqual({ run: "database" });
    expect(startDecision("none", { ATELIER_PUBLIC_URL: "https://a.example", ATELIER_SANDBOX: "0" })).toEqual({ run: "setup" });
    expect(startDecision("none", { ATELIER_SANDBOX: "0" })).toEqual({ run: "setup" });
  });

  it("knows a local URL", () => {
    expect(isLocalUrl("http://localhost:3000")).toBe(true);
    expect(isLocalUrl("http://[::1]/")).toBe(true);
    expect(isLocalUrl("https://atelier.example.com")).toBe(false);
    expect(isLocalUrl("not a url")).toBe(false);
  });
});
