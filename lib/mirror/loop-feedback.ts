import type { StoredConfig } from "../loops/stored-config";

/**
 * Whether a Loop comments on its Items (`feedback: { comment: … }`, default true), read from
 * the repository's stored config (its valid Loops). A Loop the config no longer has keeps the
 * default.
 */
export function commentsOnItems(repoConfig: unknown, loop: string): boolean {
  const loops = (repoConfig as Partial<Pick<StoredConfig, "loops">> | null)?.loops;
  const definition = Array.isArray(loops) ? loops.find((l) => l?.name === loop) : undefined;
  const comment = definition?.feedback?.comment;
  return typeof comment === "boolean" ? comment : true;
}
