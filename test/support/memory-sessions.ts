import type { AttemptSessions, LoadedSession } from "../../lib/executor/agent-session";
import type { AgentKind } from "../../lib/executor/adapters/types";

/**
 * An in-memory stand-in for a Run's kept session, for the executor's tests (the runner's is
 * sealed in Postgres: lib/runner/kept-sessions.ts): one per Run id, shared by the Attempts of a
 * test file as the Postgres one is by every worker.
 */
const kept = new Map<string, { kind: AgentKind; sessionId: string; archive: Buffer }>();

export function memorySessions(runId: string): AttemptSessions & { saves: number; resumedIds: string[] } {
  const self = {
    saves: 0,
    resumedIds: [] as string[],
    async save(session: { kind: AgentKind; sessionId: string; archive: Buffer }) {
      self.saves++;
      kept.set(runId, session);
      return true;
    },
    async load(): Promise<LoadedSession> {
      const found = kept.get(runId);
      return found ? { tag: "Found", ...found } : { tag: "None" };
    },
    async resumed(sessionId: string) {
      self.resumedIds.push(sessionId);
    },
  };
  return self;
}
