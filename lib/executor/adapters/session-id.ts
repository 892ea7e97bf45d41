/**
 * A session id as the CLIs print them: Claude Code's session_id and Codex's thread_id are
 * UUIDs. Anything else an agent's output claims (a forged `result` line can say anything) is
 * not a session: it never becomes `--resume <value>` or `exec resume <value>`.
 */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID.test(value);
}
