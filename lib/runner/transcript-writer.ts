import type { OutputEntry } from "../executor/agent-spec";
import { announce } from "../store/announce";
import type { Db } from "../store/db";

/**
 * Stores an Attempt's output as it comes: entries are batched (every `flushMs`, or at once
 * when `maxLines` are waiting) into one multi-row insert, then the channel `atelier_transcript`
 * is told the Run id (batched with other Attempts' announcements, see store/announce.ts), so
 * the dashboard streams the new rows (SSE) without polling.
 * Writes are serialized, so rows keep the order of the output.
 */

export const TRANSCRIPT_CHANNEL = "atelier_transcript";

export interface TranscriptOptions {
  flushMs?: number;
  maxLines?: number;
  /** Called when a batch could not be stored (the Attempt goes on; the lines are lost). */
  onError?: (err: unknown) => void;
}

const INSERT = {
  name: "atelier-transcript-insert",
  text: `INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
         SELECT $1, $2, u.stream, u.text, u.at FROM unnest($3::text[], $4::text[], $5::timestamptz[]) AS u(stream, text, at)`,
};


export class TranscriptWriter {
  private buffer: { stream: string; text: string; at: Date }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly flushMs: number;
  private readonly maxLines: number;

  constructor(
    private readonly db: Db,
    readonly attemptId: string,
    readonly runId: string,
    private readonly options: TranscriptOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 100;
    this.maxLines = options.maxLines ?? 50;
  }

  /** The executor's output sink. Never throws. */
  readonly push = (entry: OutputEntry): void => {
    if (this.closed) return;
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
          await this.db.pool.query({
            ...INSERT,
            values: [this.attemptId, this.runId, batch.map((e) => e.stream), batch.map((e) => e.text), batch.map((e) => e.at)],
          });
          announce(this.db.pool, TRANSCRIPT_CHANNEL, [this.runId]);
        } catch (err) {
          this.options.onError?.(err);
        }
      });
    }
    return this.writing;
  }

  /** Stores what is left and refuses later output; `discard` drops what is still buffered. */
  async close(opts: { discard?: boolean } = {}): Promise<void> {
    if (opts.discard) this.buffer = [];
    const done = this.flush();
    this.closed = true;
    await done;
  }
}
