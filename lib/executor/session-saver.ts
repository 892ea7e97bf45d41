import type { AgentKind, TranscriptStep } from "./adapters/types";
import { packAgentSession, type AttemptSessions } from "./agent-session";

/** How often a running agent's session is saved at most (it is saved again when the agent exits). */
export const DEFAULT_SESSION_SAVE_EVERY_MS = 30_000;

/**
 * Saves a running agent's session as it goes (ADR 0082), so that an Attempt whose worker dies or
 * is drained leaves the conversation for the next one: every `everyMs` at most, only once the
 * agent reported its session, only when what it holds changed since the last save, one save at a
 * time (a slow store skips ticks, it never queues them). `finish` saves once more, whole, after
 * the agent exited. What was not kept is said once in the transcript.
 */
export class SessionSaver {
  private sessionId: string | null = null;
  private lastDigest: string | null = null;
  private saving: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private said = new Set<string>();

  constructor(
    private readonly kind: AgentKind,
    private readonly home: string,
    private readonly sessions: AttemptSessions,
    private readonly everyMs: number,
    private readonly note: (text: string) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  /** The agent's steps, as its adapter reads them: the session it reports is the one saved. */
  onStep(step: TranscriptStep): void {
    if (step.type === "session") this.sessionId = step.sessionId;
  }

  /** Stops the ticks (the agent's run threw: nothing more is saved). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops the ticks and, after the agent exited, saves the session whole (the report's id when it gave one). */
  async finish(reported: string | null): Promise<void> {
    this.stop();
    await this.saving;
    if (reported) this.sessionId = reported;
    await this.save(false);
  }

  private tick(): void {
    if (this.saving) return;
    this.saving = this.save(true).finally(() => (this.saving = null));
  }

  private async save(wholeLines: boolean): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) return;
    try {
      const packed = await packAgentSession(this.kind, this.home, { wholeLines });
      if (packed.tag === "NotKept") return this.say(`the agent's session ${sessionId} was not kept for the next Attempt: ${packed.reason}`);
      if (packed.packed.digest === this.lastDigest) return;
      const saved = await this.sessions.save({ kind: this.kind, sessionId, archive: packed.packed.archive });
      if (!saved) return this.say(`the agent's session ${sessionId} was not kept: this worker no longer holds the Attempt`);
      this.lastDigest = packed.packed.digest;
    } catch (err) {
      this.say(`the agent's session ${sessionId} could not be kept: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private say(text: string): void {
    if (this.said.has(text)) return;
    this.said.add(text);
    this.note(text);
  }
}
