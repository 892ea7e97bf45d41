/**
 * Redaction of the secrets in play (the installation token, the roster secrets' values, the
 * git auth header in its forms) and of anything shaped like a known kind of key (GitHub, Atelier's
 * own `atl_`, Anthropic, OpenAI, AWS, Slack). A secret of up to LOOSE_SECRET_LENGTH characters is
 * also masked when it is printed loosely: with spaces, zero-width characters or ANSI escapes
 * between its characters, or with some or all of them JSON `\u`-escaped. A stream keeps
 * back only a tail that could still become a secret once the next chunk arrives, so a secret
 * split across two chunks is replaced as surely as a whole one; the streamed result equals
 * `redact` of the whole text.
 */

export const REDACTED = "***";

/** Values shorter than this are not treated as secrets (they would blank ordinary text). */
export const MIN_SECRET_LENGTH = 4;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A kind of key recognized by its shape alone: a prefix, then a body of `body` characters. */
interface TokenShape {
  prefix: string;
  body: RegExp;
  /** Shortest body redacted; shorter is ordinary text. */
  minBody: number;
  /** A body longer than this is cut there (it cannot be held back forever). */
  maxBody: number;
  /** The body must hold an upper-case letter and a digit (so `task-management-…` is not a key). */
  mixed?: boolean;
}

const WORD = /[A-Za-z0-9_]/;
const DASHED = /[A-Za-z0-9_-]/;

const TOKEN_SHAPES: readonly TokenShape[] = [
  // GitHub: classic, OAuth, app installation, user-to-server, refresh, fine-grained
  ...["ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"].map((prefix) => ({ prefix, body: WORD, minBody: 20, maxBody: 255 })),
  // Atelier's own API tokens: atl_<id>_<secret>
  { prefix: "atl_", body: DASHED, minBody: 20, maxBody: 255 },
  { prefix: "sk-ant-", body: DASHED, minBody: 20, maxBody: 255 },
  { prefix: "sk-", body: DASHED, minBody: 20, maxBody: 255, mixed: true },
  // AWS access key ids (long-lived and temporary)
  ...["AKIA", "ASIA"].map((prefix) => ({ prefix, body: /[A-Z0-9]/, minBody: 16, maxBody: 16 })),
  // Slack: bot, user, app, refresh, session, configuration tokens
  ...["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"].map((prefix) => ({ prefix, body: /[A-Za-z0-9-]/, minBody: 10, maxBody: 255 })),
];
const TOKEN_PREFIXES = TOKEN_SHAPES.map((t) => t.prefix);
const TOKEN_FIRST_CHARS = new Set(TOKEN_PREFIXES.map((p) => p[0] as string));

/** A secret at most this long is also looked for in its loose forms (a private key is masked line by line instead). */
export const LOOSE_SECRET_LENGTH = 128;
/** At most this many separators between two characters of a loosely printed secret. */
const MAX_SEPARATORS = 4;
/** The longest one separator is (an ANSI escape written `\u001b[…m`). */
const MAX_SEPARATOR_LENGTH = 24;
/** Characters that print as nothing, or nearly: soft hyphen, zero-width space/joiners, word joiner, BOM. */
const INVISIBLE = new Set([" ", "\t", "\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]);
/** The escape character, as it is or written out in a JSON string, a C string or a shell. */
const ESCAPES = ["\u001b", "\\u001b", "\\u001B", "\\x1b", "\\x1B", "\\033", "\\e"];
/** Where a loosely printed secret may start: its first character before a separator, or any `\u` escape. */
const LOOSE_START = `(?=[ \\t\\u00ad\\u200b-\\u200d\\u2060\\ufeff\\u001b]|\\\\)`;

/** A regular expression for any beginning of `secret` (`a(?:b(?:c)?)?`): the run before a loose form's first separator. */
function looseHead(secret: string): string {
  let pattern = "";
  for (let k = secret.length - 1; k >= 1; k--) pattern = `(?:${escapeRegExp(secret[k]!)}${pattern})?`;
  return `${escapeRegExp(secret[0]!)}${pattern}`;
}

/** Text ended before it was decided; length of what matched; or no match. */
type Step = number | "partial" | null;

/** `ch` at `j`, as it is or as `\uXXXX` (either case): its length. */
function charAt(text: string, j: number, ch: string, final: boolean): Step {
  if (text[j] === ch) return 1;
  const escaped = `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  const here = text.slice(j, j + 6).toLowerCase();
  if (here === escaped) return 6;
  return !final && here.length < 6 && j + here.length === text.length && escaped.startsWith(here) ? "partial" : null;
}

/** A separator at `j`: an invisible character (as it is or `\u`-escaped), or an ANSI CSI escape. */
function separatorAt(text: string, j: number, final: boolean): Step {
  if (INVISIBLE.has(text[j]!)) return 1;
  const six = text.slice(j, j + 6).toLowerCase();
  if (six.length === 6 && six.startsWith("\\u") && INVISIBLE.has(String.fromCharCode(parseInt(six.slice(2), 16)))) return 6;
  for (const esc of ESCAPES) {
    const head = text.slice(j, j + esc.length);
    if (head !== esc) {
      if (!final && j + head.length === text.length && esc.startsWith(head)) return "partial";
      continue;
    }
    // CSI: `[`, parameter bytes, intermediate bytes, one final byte
    let k = j + esc.length;
    if (k === text.length) return final ? null : "partial";
    if (text[k] !== "[") return null;
    k++;
    while (k < text.length && k - j < MAX_SEPARATOR_LENGTH && /[0-?]/.test(text[k]!)) k++;
    while (k < text.length && k - j < MAX_SEPARATOR_LENGTH && /[ -/]/.test(text[k]!)) k++;
    if (k === text.length) return final ? null : "partial";
    return /[@-~]/.test(text[k]!) && k - j < MAX_SEPARATOR_LENGTH ? k + 1 - j : null;
  }
  return null;
}

/** `secret` at `i`, each character as it is or `\u`-escaped, up to MAX_SEPARATORS separators between two. */
function looseAt(text: string, i: number, secret: string, final: boolean): Step {
  let j = i;
  for (let k = 0; k < secret.length; k++) {
    for (let skipped = 0; ; skipped++) {
      if (j >= text.length) return final ? null : "partial";
      const ch = charAt(text, j, secret[k]!, final);
      if (ch === "partial") return ch;
      if (ch !== null) {
        j += ch;
        break;
      }
      const sep = k === 0 || skipped === MAX_SEPARATORS ? null : separatorAt(text, j, final);
      if (sep === null || sep === "partial") return sep;
      j += sep;
    }
  }
  return j - i;
}


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
  /** The values looked for in their loose forms too. */
  private readonly loose: string[];
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
    this.loose = this.values.filter((v) => v.length >= MIN_SECRET_LENGTH && v.length <= LOOSE_SECRET_LENGTH);
    this.firstChars = new Set([...this.secrets, ...this.loose].map((s) => s[0] as string));
    if (this.loose.length > 0) this.firstChars.add("\\");
    const looseStarts = this.loose.map((v) => `${looseHead(v)}${LOOSE_START}`);
    if (this.loose.length > 0) looseStarts.push("\\\\u[0-9A-Fa-f]{4}");
    this.finder = new RegExp([...[...this.secrets, ...TOKEN_PREFIXES].map(escapeRegExp), ...looseStarts].join("|"), "g");
    const looseLongest = Math.max(0, ...this.loose.map((v) => v.length * 6 + (v.length - 1) * MAX_SEPARATORS * MAX_SEPARATOR_LENGTH));
    this.longest = Math.max(0, looseLongest, ...this.secrets.map((s) => s.length), ...TOKEN_PREFIXES.map((p) => p.length));
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
      if (this.firstChars.has(c) || TOKEN_FIRST_CHARS.has(c)) return j;
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
    for (const secret of this.loose) {
      const loose = looseAt(text, i, secret, final);
      if (loose === "partial") partial = true;
      else if (loose !== null) best = Math.max(best, loose);
    }
    if (partial) return { tag: "partial" };
    const token = this.tokenAt(text, i, final);
    if (token?.tag === "partial") return token;
    const tokenLength = token?.tag === "match" ? token.length : 0;
    const length = Math.max(best, tokenLength);
    return length > 0 ? { tag: "match", length } : null;
  }

  /**
   * A key of a known shape starting at i, whatever comes before it: a token glued to a word is
   * still a token, and so is one after an escape (`\nghp_…` in JSON) or a colour code. The
   * longest shape that matches wins (`sk-ant-…` over `sk-…`).
   */
  private tokenAt(text: string, i: number, final: boolean): Match {
    let best = 0;
    for (const shape of TOKEN_SHAPES) {
      const { prefix } = shape;
      if (text.startsWith(prefix, i)) {
        let j = i + prefix.length;
        while (j < text.length && j - i - prefix.length < shape.maxBody && shape.body.test(text[j]!)) j++;
        const body = text.slice(i + prefix.length, j);
        if (j === text.length && !final && body.length < shape.maxBody) return { tag: "partial" };
        if (body.length >= shape.minBody && (!shape.mixed || (/[A-Z]/.test(body) && /[0-9]/.test(body)))) best = Math.max(best, j - i);
      } else if (!final && text.length - i < prefix.length && prefix.startsWith(text.slice(i))) {
        return { tag: "partial" };
      }
    }
    return best > 0 ? { tag: "match", length: best } : null;
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
