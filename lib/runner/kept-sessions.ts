import type { AgentKind } from "../executor/adapters/types";
import type { AttemptSessions, LoadedSession } from "../executor/agent-session";
import { openSession, sealSession } from "../secrets/session-box";
import type { Db } from "../store/kernel/db";
import { loadSessionBlob, saveSessionBlob, type SessionBlobMeta, type SessionWriter, type StoredSessionBlob } from "../store/runs/agent-sessions";

/**
 * Where the Runs' agent sessions are kept so that every worker reaches them (ADR 0082): a small
 * blob store, by Run, whose default is Postgres (store/runs/agent-sessions.ts). What it holds is
 * sealed here, with the instance key, bound to the Run's id: the store never sees a session in
 * clear, and a blob that does not open for the Run it is read for is refused.
 */
export interface SessionBlobStore {
  /** Keeps the Run's session, replacing the last one; false when the writer no longer holds its Attempt. */
  put(writer: SessionWriter, meta: SessionBlobMeta, blob: Buffer): Promise<boolean>;
  /** The Run's kept blob, or null. */
  get(runId: string): Promise<StoredSessionBlob | null>;
}

export const postgresSessionStore = (db: Db): SessionBlobStore => ({
  put: (writer, meta, blob) => saveSessionBlob(db, writer, meta, blob),
  get: (runId) => loadSessionBlob(db, runId),
});

const KINDS: ReadonlySet<string> = new Set<AgentKind>(["claude", "codex"]);

/**
 * The Attempt's way to its Run's kept session: saves fenced by its lease, loads opened for its
 * Run only; `onResumed` records the session it resumed (recordResumedSession).
 */
export function attemptSessions(
  store: SessionBlobStore,
  key: string,
  writer: SessionWriter,
  repositoryId: string | null,
  onResumed: (sessionId: string) => Promise<void>,
): AttemptSessions {
  return {
    save: ({ kind, sessionId, archive }) => store.put(writer, { kind, sessionId, repositoryId }, sealSession(archive, key, writer.runId)),
    async load(): Promise<LoadedSession> {
      const kept = await store.get(writer.runId);
      if (!kept) return { tag: "None" };
      const archive = openSession(kept.blob, key, writer.runId);
      if (!archive) return { tag: "Refused", reason: "it does not open for this Run with this instance's key (altered, another Run's, or sealed under another key)" };
      if (!KINDS.has(kept.kind)) return { tag: "Refused", reason: `it names an unknown kind of agent` };
      return { tag: "Found", kind: kept.kind as AgentKind, sessionId: kept.sessionId, archive };
    },
    resumed: onResumed,
  };
}
