import { DEFAULT_TRANSCRIPT_MB } from "../config/roster";
import type { OutputEntry } from "../executor/agent-spec";
import { storeTranscriptBatch } from "../store/runs/attempt-transcript";
import type { Db } from "../store/kernel/db";
import type { TranscriptLine } from "../store/runs/transcript-lines";

/**
 * Stores an Attempt's output as it comes: entries are batched (every `flushMs`, or at once
 * when `maxLines` are waiting) into one multi-row insert, then the channel `atelier_transcript`
 * is told the Run id (batched with other Attempts' announcements, see store/announce.ts), so
 * the dashboard streams the new rows (SSE) without polling.
 * Writes are serialized, so rows keep the order of the output.
 */

/** What one Attempt's transcript holds at most by default: past it, the agent's output is counted, not kept. */
const DEFAULT_TRANSCRIPT_MAX_BYTES = DEFAULT_TRANSCRIPT_MB * 1024 * 1024;

export interface TranscriptOptions {
  flushMs?: number;
  maxLines?: number;
  /** The agent's output kept at most (bytes of text, Atelier's own lines not counted). */
  maxBytes?: number;
  /** Called when a batch could not be stored (the Attempt goes on; the lines are lost). */
  onError?: (err: unknown) => void;
}

export class TranscriptWriter {
  private buffer: TranscriptLine[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly flushMs: number;
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private kept = 0;
  private cut = 0;

  constructor(
    private readonly db: Db,
    readonly attemptId: string,
    readonly runId: string,
    private readonly options: TranscriptOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 100;
    this.maxLines = options.maxLines ?? 50;
    this.maxBytes = options.maxBytes ?? DEFAULT_TRANSCRIPT_MAX_BYTES;
  }

  /** The executor's output sink. Never throws. */
  readonly push = (entry: OutputEntry): void => {
    if (this.closed) return;
    if (entry.stream !== "system") {
      const bytes = Buffer.byteLength(entry.text);
      if (this.cut > 0 || this.kept + bytes > this.maxBytes) {
        if (this.cut === 0) this.buffer.push({ stream: "system", text: `the transcript is full (${this.maxBytes} bytes): the agent's further output is counted, not kept`, at: new Date() });
        this.cut += bytes;
        return;
      }
      this.kept += bytes;
    }
    // NUL cannot be stored in a text column
    this.buffer.push({ stream: entry.stream, text: entry.text.replace(/\u0000/g, ""), at: new Date() });
    if (this.buffer.length >= this.maxLines) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  };

  /** A line from Atelier itself. */
  system(text: string): void {
    this.push({ stream: "system", text });
  }

  /** Starts writing what is buffered; resolves once every batch so far is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer.splice(0);
    if (batch.length > 0) {
      this.writing = this.writing.then(async () => {
        try {
          await storeTranscriptBatch(this.db, this.attemptId, this.runId, batch);
        } catch (err) {
          this.options.onError?.(err);
        }
      });
    }
    return this.writing;
  }

  /**
   * Refuses later output and hands back what is still buffered, once every earlier batch is
   * stored: the caller stores it with the Attempt's outcome.
   */
  async takeTail(): Promise<TranscriptLine[]> {
    this.noteCut();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closed = true;
    await this.writing;
    return this.buffer.splice(0);
  }

  /** Stores what is left and refuses later output; `discard` drops what is still buffered. */
  async close(opts: { discard?: boolean } = {}): Promise<void> {
    if (opts.discard) this.buffer = [];
    else this.noteCut();
    const done = this.flush();
    this.closed = true;
    await done;
  }

  /** Says how much was not kept, once, at the end. */
  private noteCut(): void {
    if (this.cut === 0 || this.closed) return;
    this.buffer.push({ stream: "system", text: `the transcript kept ${this.kept} bytes of the agent's output and cut ${this.cut} more`, at: new Date() });
  }
}
