import { readFile, stat } from "node:fs/promises";
import { z } from "zod";

/**
 * The optional file an agent writes at $ATELIER_RESULT_FILE. It is read strictly: a file that is
 * missing is nothing, a file that is malformed is ignored with a reason for the transcript —
 * an agent's bad output never becomes Atelier's state.
 */

export const MAX_RESULT_FILE_BYTES = 1024 * 1024;

export const AgentResultSchema = z
  .object({
    summary: z.string().max(20_000).optional(),
    tokens_in: z.number().int().nonnegative().optional(),
    tokens_out: z.number().int().nonnegative().optional(),
    cost_usd: z.number().nonnegative().finite().optional(),
    pull_request: z
      .object({
        title: z.string().min(1).max(256).optional(),
        body: z.string().max(65_536).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type AgentResult = z.infer<typeof AgentResultSchema>;

export type ResultFileReading = { tag: "Absent" } | { tag: "Read"; result: AgentResult } | { tag: "Ignored"; reason: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}

/** Reads and validates the result file; never throws. */
export async function readResultFile(path: string): Promise<ResultFileReading> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { tag: "Ignored", reason: "it is not a regular file" };
    size = info.size;
  } catch {
    return { tag: "Absent" };
  }
  if (size > MAX_RESULT_FILE_BYTES) return { tag: "Ignored", reason: `it is larger than ${MAX_RESULT_FILE_BYTES} bytes` };
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    return { tag: "Ignored", reason: `it is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = AgentResultSchema.safeParse(data);
  if (!parsed.success) return { tag: "Ignored", reason: `it does not match the expected shape (${describeIssues(parsed.error)})` };
  return { tag: "Read", result: parsed.data };
}
