import { createHmac } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IN_MEMORY_BYTES, readSignedBody } from "../../lib/github/read-signed-body";

// A webhook body is read while its signature is computed; past 1 MiB it waits on disk until
// the signature is known, and nothing of it is left behind either way.

const SECRET = "read-signed-body-test-secret";
const signatureOf = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body, "utf8").digest("hex")}`;
const streamOf = (body: string, chunk = 64 * 1024) => {
  const bytes = Buffer.from(body, "utf8");
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(new Uint8Array(bytes.subarray(at, at + chunk)));
      at += chunk;
    },
  });
};
// a temporary directory of this file's own, so that other files' deliveries are not counted
const ownTmp = mkdtempSync(join(tmpdir(), "atelier-read-signed-"));
const savedTmp = process.env.TMPDIR;
process.env.TMPDIR = ownTmp;
afterAll(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(ownTmp, { recursive: true, force: true });
});
const spools = () => readdirSync(ownTmp).filter((name) => name.startsWith("atelier-webhook-")).length;

describe("reading a webhook body under its signature", () => {
  it("hands back a signed body, small (in memory) or large (through its temporary file), byte for byte", async () => {
    expect(tmpdir()).toBe(ownTmp);
    const before = spools();
    for (const body of ['{"zen":"small"}', JSON.stringify({ big: "é".repeat(IN_MEMORY_BYTES) }), ""]) {
      const read = await readSignedBody(streamOf(body), String(Buffer.byteLength(body)), SECRET, signatureOf(body));
      expect(read).toEqual({ signed: true, body });
    }
    expect(spools()).toBe(before);
  });

  it("says unsigned for a forged body of any size, and leaves no file", async () => {
    const before = spools();
    const big = "x".repeat(3 * IN_MEMORY_BYTES);
    expect(await readSignedBody(streamOf(big), String(big.length), SECRET, signatureOf("another body"))).toEqual({ signed: false });
    expect(await readSignedBody(streamOf("{}"), null, "", signatureOf("{}"))).toEqual({ signed: false });
    expect(spools()).toBe(before);
  });

  it("refuses a declared or counted length over 25 MB, or over 1 MiB with no length declared, with webhook_too_large", async () => {
    await expect(readSignedBody(streamOf("{}"), String(26 * 1024 * 1024), SECRET, signatureOf("{}"))).rejects.toMatchObject({ token: "webhook_too_large", status: 413 });
    const before = spools();
    // a body longer than it said
    await expect(readSignedBody(streamOf("y".repeat(25 * 1024 * 1024 + 1)), "100", SECRET, signatureOf("y"))).rejects.toMatchObject({ token: "webhook_too_large" });
    const undeclared = "z".repeat(IN_MEMORY_BYTES + 1);
    await expect(readSignedBody(streamOf(undeclared), null, SECRET, signatureOf(undeclared))).rejects.toMatchObject({
      token: "webhook_too_large",
      message: expect.stringContaining("without a Content-Length"),
    });
    expect(await readSignedBody(streamOf('{"a":1}'), null, SECRET, signatureOf('{"a":1}'))).toEqual({ signed: true, body: '{"a":1}' });
    expect(spools()).toBe(before);
  });
});
