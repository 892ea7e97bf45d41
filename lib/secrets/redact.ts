/**
 * Redaction of the secrets in play (the installation token, the roster secrets' values, the
 * git auth header in its forms) and of anything that looks like a GitHub token. A stream keeps
 * back only a tail that could still become a secret once the next chunk arrives, so a secret
 * split across two chunks is replaced as surely as a whole one; the streamed result equals
 * `redact` of the whole text.
 */

export const REDACTED = "***";

/** Values shorter than this are not treated as secrets (they would blank ordinary text). */
export const MIN_SECRET_LENGTH = 4;

/** Prefixes of GitHub tokens (classic, OAuth, app installation, user-to-server, refresh, fine-grained). */
const TOKEN_PREFIXES = ["ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"] as const;
/** Shortest token body (after the prefix) redacted generically; real ones are 36+. */
const MIN_TOKEN_BODY = 20;
/** A token body longer than this is cut there (it cannot be held back forever). */
const MAX_TOKEN_BODY = 255;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const isTokenChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);

type Match = { tag: "match"; length: number } | { tag: "partial" } | null;

export interface RedactingStream {
  /** Takes the next chunk; returns the redacted text that is safe to show now. */
  push(chunk: string): string;
  /** The stream ended: returns the redacted rest. */
  end(): string;
}

export class Redactor {
  /** The values as given (`with` adds to these, not to their forms). */
  private readonly values: string[];
  /** Every form of every value, longest first, so the longest secret wins at a position. */
  private readonly secrets: string[];
  private readonly firstChars: Set<string>;
  /** Finds, natively, the next place where a whole secret or a token prefix starts. */
  private readonly finder: RegExp;
  /** The longest a secret or a token prefix is: only this close to a chunk's end can one be cut off. */
  private readonly longest: number;

  constructor(secrets: Iterable<string | null | undefined>) {
    this.values = [...new Set([...secrets].filter((s): s is string => Boolean(s)))];
    const all = new Set<string>();
    for (const secret of this.values) {
      if (secret.length >= MIN_SECRET_LENGTH) for (const form of secretForms(secret)) all.add(form);
      // A multi-line secret (a private key, its newlines real or written `\n` as in a .env
      // file) is also masked line by line.
      if (/\n|\\n/.test(secret)) {
        for (const line of secret.split(/\r?\n|(?:\\r)?\\n/)) if (line.trim().length >= 8) all.add(line.trim());
      }
    }
    this.secrets = [...all].sort((a, b) => b.length - a.length);
    this.firstChars = new Set(this.secrets.map((s) => s[0] as string));
    this.finder = new RegExp([...this.secrets, ...TOKEN_PREFIXES].map(escapeRegExp).join("|"), "g");
    this.longest = Math.max(0, ...this.secrets.map((s) => s.length), ...TOKEN_PREFIXES.map((p) => p.length));
  }

  /** A Redactor that also masks these values. */
  with(secrets: Iterable<string | null | undefined>): Redactor {
    return new Redactor([...this.values, ...secrets]);
  }

  /** Redacts a complete text. */
  redact(text: string): string {
    return this.scan(text, true).out;
  }

  /** A stateful redactor for one output stream. */
  stream(): RedactingStream {
    let held = "";
    return {
      push: (chunk: string) => {
        const { out, rest } = this.scan(held + chunk, false);
        held = rest;
        return out;
      },
      end: () => {
        const { out } = this.scan(held, true);
        held = "";
        return out;
      },
    };
  }

  /**
   * Leftmost-longest scan. With `final` false it stops at the first position where more text
   * could complete a secret and returns that tail as `rest`.
   */
  private scan(text: string, final: boolean): { out: string; rest: string } {
    let out = "";
    let runStart = 0;
    let i = 0;
    const tailFrom = final ? text.length : Math.max(0, text.length - this.longest);
    while (i < text.length) {
      const at = this.nextCandidate(text, i, tailFrom);
      if (at >= text.length) break;
      const m = this.matchAt(text, at, final);
      if (m === null) {
        i = at + 1;
        continue;
      }
      out += text.slice(runStart, at);
      if (m.tag === "partial") {
        return { out, rest: text.slice(at) };
      }
      out += REDACTED;
      i = at + m.length;
      runStart = i;
    }
    out += text.slice(runStart);
    return { out, rest: "" };
  }

  /**
   * The next position from `i` where a secret or a token may start: where the finder sees a
   * whole one, or earlier, in the tail from `tailFrom` (where the chunk's end may cut one off),
   * any position whose character begins one.
   */
  private nextCandidate(text: string, i: number, tailFrom: number): number {
    this.finder.lastIndex = i;
    const found = this.finder.exec(text);
    const whole = found ? found.index : text.length;
    for (let j = Math.max(i, tailFrom); j < whole; j++) {
      const c = text[j] as string;
      if (this.firstChars.has(c) || c === "g") return j;
    }
    return whole;
  }

  private matchAt(text: string, i: number, final: boolean): Match {
    const remaining = text.length - i;
    let partial = false;
    let best = 0;
    for (const secret of this.secrets) {
      if (secret.length > remaining) {
        if (!final && !partial && secret.startsWith(text.slice(i))) partial = true;
        continue;
      }
      if (best === 0 && text.startsWith(secret, i)) best = secret.length;
    }
    if (partial) return { tag: "partial" };
    const token = this.tokenAt(text, i, final);
    if (token?.tag === "partial") return token;
    const tokenLength = token?.tag === "match" ? token.length : 0;
    const length = Math.max(best, tokenLength);
    return length > 0 ? { tag: "match", length } : null;
  }

  /**
   * A GitHub-looking token starting at i, whatever comes before it: a token glued to a word is
   * still a token, and so is one after an escape (`\nghp_…` in JSON) or a colour code.
   */
  private tokenAt(text: string, i: number, final: boolean): Match {
    for (const prefix of TOKEN_PREFIXES) {
      if (text.startsWith(prefix, i)) {
        let j = i + prefix.length;
        while (j < text.length && j - i - prefix.length < MAX_TOKEN_BODY && isTokenChar(text[j])) j++;
        const body = j - i - prefix.length;
        if (j === text.length && !final && body < MAX_TOKEN_BODY) return { tag: "partial" };
        return body >= MIN_TOKEN_BODY ? { tag: "match", length: j - i } : null;
      }
      if (!final && text.length - i < prefix.length && prefix.startsWith(text.slice(i))) return { tag: "partial" };
    }
    return null;
  }
}

/** The forms in which a git credential for `token` can show up in output. */
export function gitCredentialForms(token: string): string[] {
  const userPass = `x-access-token:${token}`;
  const basic = Buffer.from(userPass).toString("base64");
  return [token, userPass, basic, `Basic ${basic}`, `Authorization: Basic ${basic}`];
}

/** The stretch of a base64 text that only the secret's bytes decide, at each of the three alignments. */
function base64Runs(bytes: Buffer, encoding: "base64" | "base64url"): string[] {
  const runs: string[] = [];
  for (let k = 0; k < 3; k++) {
    const text = Buffer.concat([Buffer.alloc(k), bytes]).toString(encoding).replace(/=+$/, "");
    const run = text.slice(Math.ceil((k * 8) / 6), Math.floor(((k + bytes.length) * 8) / 6));
    if (run.length >= 8) runs.push(run);
  }
  return runs;
}

/**
 * The forms a secret can be printed in, to be masked in each: as it is, base64 (standard and
 * URL-safe, wherever it sits in the encoded text), hex (either case), URL-encoded and
 * JSON-escaped.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const hex = bytes.toString("hex");
  const forms = [secret, ...base64Runs(bytes, "base64"), ...base64Runs(bytes, "base64url"), hex, hex.toUpperCase(), encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** The instance's own secrets, by the environment variable that holds each (and the passwords in its service URLs). */
export const INSTANCE_SECRET_VARIABLES = [
  "AUTH_SECRET",
  "NEXTAUTH_SECRET",
  "ATELIER_SECRET_KEY",
  "GITHUB_PRIVATE_KEY",
  "GITHUB_WEBHOOK_SECRET",
  "GITHUB_CLIENT_SECRET",
  "ATELIER_METRICS_TOKEN",
] as const;

/** The secrets this process loaded from elsewhere than its environment; one set per process (globalThis: Next.js gives each bundle its own copy of a module). */
const loaded = ((globalThis as { [key: symbol]: Set<string> | undefined })[Symbol.for("atelier.loadedSecrets")] ??= new Set<string>());

/**
 * Remembers secrets the process read from a file (GITHUB_PRIVATE_KEY_PATH, the sandbox's App
 * file), from the database (the manifest flow's App) or generated (an instance secret kept in
 * its file), so that instanceSecretValues masks them as it masks those of the environment.
 */
export function rememberInstanceSecrets(values: Iterable<string | null | undefined>): void {
  for (const value of values) if (value) loaded.add(value);
}

/** Every instance secret this process holds: what no transcript, page or comment may ever show. */
export function instanceSecretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values: string[] = [...INSTANCE_SECRET_VARIABLES.map((name) => env[name]).filter((v): v is string => Boolean(v)), ...loaded];
  for (const name of ["DATABASE_URL", "REDIS_URL"]) {
    try {
      const password = env[name] ? decodeURIComponent(new URL(env[name]!).password) : "";
      if (password) values.push(password);
    } catch {
      // not a URL: nothing to take from it
    }
  }
  return values;
}

/**
 * A text Atelier writes itself from an error it met (kept on an Attempt or a Run, shown on the
 * dashboard and the check run), with the instance's secrets, `more` and anything shaped like a
 * GitHub token masked.
 */
export function maskSecrets(text: string, more: Iterable<string> = []): string {
  return new Redactor([...instanceSecretValues(), ...more]).redact(text);
}
