/** A partial line is shown after this long without its newline. */
export const PARTIAL_LINE_FLUSH_MS = 200;
/** A line longer than this is shown in pieces rather than held. */
const MAX_PENDING = 64 * 1024;

/**
 * Groups a stream's text into complete lines: each `emit` carries one or more whole lines
 * (ending in "\n"), except that a partial line waiting longer than `flushMs` is emitted as it
 * is, and `end` emits whatever is left.
 */
export class LineBuffer {
  private pending = "";
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly flushMs = PARTIAL_LINE_FLUSH_MS,
  ) {}

  push(text: string): void {
    if (text === "") return;
    this.pending += text;
    const nl = this.pending.lastIndexOf("\n");
    if (nl >= 0) {
      const lines = this.pending.slice(0, nl + 1);
      this.pending = this.pending.slice(nl + 1);
      this.emit(lines);
    }
    if (this.pending.length > MAX_PENDING) {
      this.flushPending();
    } else if (this.pending === "") {
      this.clearTimer();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushPending();
      }, this.flushMs);
    }
  }

  end(): void {
    this.flushPending();
  }

  private flushPending(): void {
    this.clearTimer();
    if (this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    this.emit(text);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
