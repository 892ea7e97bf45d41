import { describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { settingsFromEnv } from "../../lib/github/app-settings";
import { instanceSecret } from "../../lib/secrets/kept-secret";
import { gitCredentialForms, instanceSecretValues, maskSecrets, REDACTED, Redactor } from "../../lib/secrets/redact";

/** Feeds `text` to a stream in the given pieces and joins what it lets out. */
function streamed(redactor: Redactor, pieces: string[]): string {
  const s = redactor.stream();
  return pieces.map((p) => s.push(p)).join("") + s.end();
}

const TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";

describe("Redactor", () => {
  it("replaces every occurrence of each secret", () => {
    const r = new Redactor(["hunter2-secret", "s3cr3t-value"]);
    expect(r.redact("a hunter2-secret b s3cr3t-value c hunter2-secret")).toBe("a *** b *** c ***");
  });

  it("prefers the longest secret at a position", () => {
    const r = new Redactor(["abcd", "abcdefgh"]);
    expect(r.redact("xabcdefghy abcdz")).toBe("x***y ***z");
  });

  it("ignores empty and very short values", () => {
    const r = new Redactor(["", null, undefined, "ab"]);
    expect(r.redact("ab cab")).toBe("ab cab");
  });

  it("masks a secret split across two chunks, at every split point", () => {
    const secret = "correct-horse-battery-staple";
    const r = new Redactor([secret]);
    const text = `before ${secret} after`;
    for (let i = 1; i < text.length; i++) {
      expect(streamed(r, [text.slice(0, i), text.slice(i)])).toBe("before *** after");
    }
  });

  it("masks a secret delivered one character at a time", () => {
    const r = new Redactor(["correct-horse"]);
    expect(streamed(r, [..."x correct-horse y correct-hors"])).toBe("x *** y correct-hors");
  });

  it("holds back only a tail that could still become a secret", () => {
    const r = new Redactor(["correct-horse"]);
    const s = r.stream();
    expect(s.push("hello cor")).toBe("hello ");
    expect(s.push("al\n")).toBe("coral\n");
    expect(s.push("plain text\n")).toBe("plain text\n");
    expect(s.end()).toBe("");
  });

  it("gives the same answer streamed as whole, for random splits", () => {
    const secrets = ["tok-AAAA-1234", "AAAA-12", "zzzz", TOKEN];
    const r = new Redactor(secrets);
    const alphabet = ["tok-", "AAAA", "-12", "34", "zz", "zzzz", " ", "\n", TOKEN.slice(0, 9), TOKEN.slice(9), "g", "gh", "x"];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const text = Array.from({ length: 12 }, () => alphabet[rand(alphabet.length)]).join("");
      const pieces: string[] = [];
      let rest = text;
      while (rest) {
        const n = 1 + rand(Math.max(1, rest.length));
        pieces.push(rest.slice(0, n));
        rest = rest.slice(n);
      }
      expect(streamed(r, pieces)).toBe(r.redact(text));
    }
  });

  it("masks GitHub-looking tokens it was never told about, even split", () => {
    const r = new Redactor([]);
    const pat = `github_pat_${"A1b2C3d4E5".repeat(8)}`;
    expect(r.redact(`token=${TOKEN} and ${pat}.`)).toBe("token=*** and ***.");
    expect(streamed(r, ["use gh", "p_", "abcdefghij0123456789ABCDEF", "ghijklmnop done"])).toBe("use *** done");
    expect(r.redact("ghp_short and ghp_abcdefghij012345678")).toBe("ghp_short and ghp_abcdefghij012345678");
  });

  it("masks a token glued to what comes before it: a word, a JSON escape, a colour code, even streamed", () => {
    const r = new Redactor([]);
    const cases = [`a_${TOKEN}`, `{"log":"line one\\n${TOKEN}\\tdone"}`, `\u001b[32m${TOKEN}\u001b[0m`, `x\r${TOKEN}`];
    for (const text of cases) {
      expect(r.redact(text)).not.toContain(TOKEN.slice(4));
      for (let i = 1; i < text.length; i++) expect(streamed(r, [text.slice(0, i), text.slice(i)])).toBe(r.redact(text));
    }
    expect(r.redact(`{"log":"one\\n${TOKEN}"}`)).toBe(`{"log":"one\\n***"}`);
  });

  it("masks a secret printed loosely: spaced out, JSON \\u-escaped, split by an ANSI escape or a zero-width character, even streamed", () => {
    // played by the attacker: an agent that knows its output is redacted prints the secret so
    // that no byte-for-byte match finds it
    const SECRET = "roster-value-Zx81Qq0Lm3";
    const r = new Redactor([SECRET]);
    const u = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    const forms = {
      spaced: SECRET.split("").join(" "),
      "double-spaced": SECRET.split("").join("  "),
      "JSON \\u-escaped": SECRET.split("").map(u).join(""),
      "half \\u-escaped": SECRET.split("").map((c, i) => (i % 2 ? u(c) : c)).join(""),
      "split by an ANSI escape": `${SECRET.slice(0, 7)}\u001b[1;31m${SECRET.slice(7, 12)}\u001b[0m${SECRET.slice(12)}`,
      "split by a written ANSI escape": `${SECRET.slice(0, 9)}\\u001b[32m${SECRET.slice(9)}`,
      "split by zero-width characters": `${SECRET.slice(0, 3)}\u200b${SECRET.slice(3, 9)}\u200d${SECRET.slice(9, 15)}\ufeff${SECRET.slice(15)}`,
    };
    for (const [name, form] of Object.entries(forms)) {
      const text = `{"log":"key ${form} end"}`;
      expect(r.redact(text), name).toBe(`{"log":"key *** end"}`);
      for (let i = 1; i < text.length; i++) expect(streamed(r, [text.slice(0, i), text.slice(i)]), `${name} split at ${i}`).toBe(r.redact(text));
    }
    // ordinary text with spaces, escapes and colours stays as it is
    const plain = "r o s t e r - v a l u e and \\u0072 \u001b[31mred\u001b[0m";
    expect(r.redact(plain)).toBe(plain);
  });

  it("masks common key shapes it was never told about: atl_, GitHub, Anthropic, OpenAI, AWS, Slack", () => {
    const r = new Redactor([]);
    const keys = [
      `atl_0123456789ab_${"Zq3_-".repeat(8)}abc`,
      `ghp_${"A1b2C3d4E5".repeat(4)}`,
      `gho_${"A1b2C3d4E5".repeat(4)}`,
      `ghs_${"A1b2C3d4E5".repeat(4)}`,
      `github_pat_11ABCDEFG0${"a1B2c3D4e5".repeat(8)}`,
      `sk-ant-api03-${"Ab3-d_F9".repeat(10)}`,
      `sk-proj-${"Ab3dEf9Gh2".repeat(5)}`,
      `sk-${"Ab3dEf9Gh2".repeat(5)}`,
      "AKIAIOSFODNN7EXAMPLE",
      "ASIAY34FZKBOKMUTVV7A",
      "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
      "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef",
    ];
    for (const key of keys) {
      expect(r.redact(`export KEY=${key}\n`), key).toBe("export KEY=***\n");
      expect(streamed(r, [`"${key.slice(0, 5)}`, `${key.slice(5)}"`]), key).toBe('"***"');
    }
    // what only looks like one is left alone: kebab-case, a short sk-, an AKIA word
    for (const text of ["task-management-system-for-the-whole-team", "sk-learn", "AKIA is a prefix", "xoxb-short"]) expect(r.redact(text)).toBe(text);
  });

  it("masks every form of the git credential", () => {
    const r = new Redactor(gitCredentialForms("plain-installation-token"));
    const basic = Buffer.from("x-access-token:plain-installation-token").toString("base64");
    const out = r.redact(`header: Authorization: Basic ${basic}\nurl: https://x-access-token:plain-installation-token@host/\n`);
    expect(out).not.toContain("plain-installation-token");
    expect(out).not.toContain(basic);
  });

  it("masks a private key written with \\n for its newlines line by line too", () => {
    const lines = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAx1yZ2Lq0example0line0one", "Qw3rTy0example0line0two0AbCdEfGh", "-----END RSA PRIVATE KEY-----"];
    const r = new Redactor([lines.join("\\n")]);
    expect(r.redact(`the agent read: ${lines[1]} and ${lines[2]}`)).toBe("the agent read: *** and ***");
  });

  it("masks a multi-line secret line by line too", () => {
    const key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----";
    const r = new Redactor([key]);
    expect(r.redact("printed: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")).toBe("printed: ***");
  });

  it("masks a secret in its encoded forms too: base64 at any offset, base64url, hex, URL-encoded, JSON-escaped, even split", () => {
    const secret = 'sk-ant-api03-"q/w+e&r=t"';
    const r = new Redactor([secret]);
    const encodings = [
      ...[0, 1, 2].map((k) => Buffer.from(`${"x".repeat(k)}${secret}tail`).toString("base64")),
      Buffer.from(`ab${secret}`).toString("base64url"),
      Buffer.from(secret).toString("hex"),
      Buffer.from(secret).toString("hex").toUpperCase(),
      encodeURIComponent(secret),
      JSON.stringify({ key: secret }),
    ];
    for (const text of encodings) {
      const whole = r.redact(`leak: ${text} end`);
      expect(whole, text).toContain(REDACTED);
      const stream = r.stream();
      const cut = Math.floor(text.length / 2);
      const streamed = stream.push(`leak: ${text.slice(0, cut)}`) + stream.push(`${text.slice(cut)} end`) + stream.end();
      expect(streamed).toBe(whole);
    }
    // no 8-character run of any encoding of the secret survives
    const b64 = Buffer.from(secret).toString("base64");
    expect(r.redact(b64)).not.toContain(b64.slice(2, 10));
    expect(r.redact(JSON.stringify(secret))).not.toContain("q/w+e&r");
  });

  it("knows the instance's own secrets: the variables that hold them and the passwords in its service URLs", () => {
    expect(
      instanceSecretValues({ AUTH_SECRET: "auth-secret-1", GITHUB_WEBHOOK_SECRET: "hook-secret-2", DATABASE_URL: "postgresql://u:p%40ss-word@h/db", REDIS_URL: "redis://127.0.0.1:6379", PATH: "/usr/bin" }),
    ).toEqual(["auth-secret-1", "hook-secret-2", "p@ss-word"]);
  });

  it("adds values with `with`, not the forms of their forms: a secret's base64 of its base64 is not a secret", () => {
    const secret = "value-of-a-secret-0123";
    const twice = Buffer.from(Buffer.from(secret).toString("base64")).toString("base64");
    const hexOfHex = Buffer.from(Buffer.from(secret).toString("hex")).toString("hex");
    const r = new Redactor([secret]).with(["another-secret-4567"]).with([]);
    expect(r.redact(`${twice} ${hexOfHex}`)).toBe(`${twice} ${hexOfHex}`);
    expect(r.redact(`${secret} another-secret-4567`)).toBe("*** ***");
    expect(r.redact(Buffer.from(secret).toString("base64"))).toMatch(/^\*\*\*/);
  });

  it("knows the secrets the process loaded from elsewhere: a key file, the sandbox's or the database's App, a generated secret", async () => {
    const dir = mkdtempSync(join(tmpdir(), "atelier-redact-"));
    try {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs1", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
      writeFileSync(join(dir, "app.pem"), privateKey);
      await settingsFromEnv({ GITHUB_APP_ID: "7", GITHUB_PRIVATE_KEY_PATH: join(dir, "app.pem"), GITHUB_WEBHOOK_SECRET: "hook-secret-from-env-9" });
      const generated = instanceSecret({ variable: "ATELIER_TEST_REDACT_SECRET", fileVariable: "ATELIER_TEST_REDACT_FILE", defaultFile: join(dir, "generated"), advice: "" }, {});
      const known = instanceSecretValues({});
      expect(known).toEqual(expect.arrayContaining([privateKey.trim() + "\n", "hook-secret-from-env-9", generated]));
      const keyLine = privateKey.split("\n")[5]!;
      expect(maskSecrets(`push failed: ${keyLine} ${generated}`)).toBe("push failed: *** ***");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
