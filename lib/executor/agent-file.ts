import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";

/**
 * Reads a file the agent left as hostile input: opened without following a link at its last
 * component (O_NOFOLLOW) and without waiting on a FIFO or a device (O_NONBLOCK), then checked on
 * the open descriptor (fstat: a regular file with one name only, so not a hard link to some other
 * file), and read no further than `maxBytes`. Nothing the file holds is ever quoted back in the
 * reason: the reason is a sentence of ours.
 */

export type AgentFileReading = { tag: "Absent" } | { tag: "Refused" | "TooLarge"; reason: string } | { tag: "Read"; data: Buffer };

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Never throws; a link, a FIFO, a device, a directory or a file over `maxBytes` is refused. */
export async function readAgentFile(path: string, maxBytes: number): Promise<AgentFileReading> {
  let handle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { tag: "Absent" };
    if (code === "ELOOP" || code === "EMLINK") return { tag: "Refused", reason: "it is a symbolic link" };
    return { tag: "Refused", reason: `it could not be opened (${code ?? "error"})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { tag: "Refused", reason: "it is not a regular file" };
    if (info.nlink !== 1) return { tag: "Refused", reason: "it is a hard link to another file" };
    if (info.size > maxBytes) return { tag: "TooLarge", reason: `it is larger than ${maxBytes} bytes` };
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > info.size) return { tag: "TooLarge", reason: "it grew while it was read" };
    return { tag: "Read", data: buffer.subarray(0, length) };
  } catch (err) {
    return { tag: "Refused", reason: `it could not be read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    await handle.close();
  }
}

/** Whether `path` is a regular file of one name (no link, no FIFO), at most `maxBytes`: for a file another program opens. */
export async function agentFileFits(path: string, maxBytes: number): Promise<boolean> {
  const info = await lstat(path).catch(() => null);
  return !!info && info.isFile() && info.nlink === 1 && info.size <= maxBytes;
}
