/**
 * Where a TLS connection says it goes: the server name (SNI) of its ClientHello, read from the
 * first bytes a client sends through a CONNECT tunnel, before anything reaches the destination.
 * Pure and bounded: a hello may span several records, but never more than
 * MAX_CLIENT_HELLO_BYTES.
 */

export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

export type ClientHelloReading =
  /** More bytes are needed. */
  | { tag: "incomplete" }
  | { tag: "hello"; serverName: string | null; encrypted: boolean }
  | { tag: "invalid"; reason: string };

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME = 0x0000;
/** encrypted_client_hello (RFC 9849) and the draft ESNI it replaced: both hide the real name. */
const ENCRYPTED_NAME = new Set([0xfe0d, 0xffce]);
const MAX_RECORD = 16_384 + 2_048;

/**
 * The ClientHello message, from as many leading handshake records as it spans; anything after
 * it (early data) is not read.
 */
function helloMessage(data: Buffer): Buffer | "incomplete" | { invalid: string } {
  const parts: Buffer[] = [];
  let have = 0;
  let offset = 0;
  for (;;) {
    if (have >= 4) {
      if (parts[0]![0] !== CLIENT_HELLO) return { invalid: "the first handshake message is not a ClientHello" };
      const message = Buffer.concat(parts);
      const length = message.readUIntBE(1, 3);
      if (4 + length > MAX_CLIENT_HELLO_BYTES) return { invalid: `the ClientHello is longer than ${MAX_CLIENT_HELLO_BYTES} bytes` };
      if (have >= 4 + length) return message.subarray(4, 4 + length);
    }
    if (offset + 5 > data.length) return "incomplete";
    if (data[offset] !== HANDSHAKE_RECORD) return { invalid: offset === 0 ? "it is not TLS" : "the ClientHello is interrupted" };
    const length = data.readUInt16BE(offset + 3);
    if (length === 0 || length > MAX_RECORD) return { invalid: "a TLS record has a bad length" };
    if (offset + 5 + length > data.length) return "incomplete";
    parts.push(data.subarray(offset + 5, offset + 5 + length));
    have += length;
    offset += 5 + length;
  }
}

/** A cursor over a ClientHello body that refuses to read past its end. */
class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  get left(): number {
    return this.buf.length - this.at;
  }
  take(n: number): Buffer {
    if (n > this.left) throw new RangeError("short");
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  u8 = () => this.take(1)[0]!;
  u16 = () => this.take(2).readUInt16BE(0);
  vector8 = () => this.take(this.u8());
  vector16 = () => this.take(this.u16());
}

function serverNameOf(extension: Buffer): string | null {
  const list = new Reader(new Reader(extension).vector16());
  while (list.left > 0) {
    const type = list.u8();
    const name = list.vector16();
    if (type === 0) return name.toString("latin1");
  }
  return null;
}

export function readClientHello(data: Buffer): ClientHelloReading {
  const message = helloMessage(data);
  if (message === "incomplete") {
    return data.length >= MAX_CLIENT_HELLO_BYTES ? { tag: "invalid", reason: `the ClientHello is longer than ${MAX_CLIENT_HELLO_BYTES} bytes` } : { tag: "incomplete" };
  }
  if (!Buffer.isBuffer(message)) return { tag: "invalid", reason: message.invalid };
  try {
    const hello = new Reader(message);
    hello.take(2 + 32); // legacy_version, random
    hello.vector8(); // legacy_session_id
    hello.vector16(); // cipher_suites
    hello.vector8(); // legacy_compression_methods
    let serverName: string | null = null;
    let encrypted = false;
    if (hello.left > 0) {
      const extensions = new Reader(hello.vector16());
      const seen = new Set<number>();
      while (extensions.left > 0) {
        const type = extensions.u16();
        const body = extensions.vector16();
        if (seen.has(type)) return { tag: "invalid", reason: "the ClientHello repeats an extension" };
        seen.add(type);
        if (type === SERVER_NAME) serverName = serverNameOf(body);
        if (ENCRYPTED_NAME.has(type)) encrypted = true;
      }
    }
    return { tag: "hello", serverName, encrypted };
  } catch {
    return { tag: "invalid", reason: "the ClientHello is malformed" };
  }
}
