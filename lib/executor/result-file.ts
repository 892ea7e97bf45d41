import { z } from "zod";
import { readAgentFile } from "./agent-file";

/**
 * The optional file an agent writes at $ATELIER_RESULT_FILE. It is read strictly: a file that is
 * missing is nothing, a file that is malformed is ignored with a reason for the transcript —
 * an agent's bad output never becomes Atelier's state. It is read as hostile input (agent-file.ts:
 * no link followed, no FIFO waited on, bounded), and the reason names fields and positions only,
 * never the file's text.
 */

export const MAX_RESULT_FILE_BYTES = 1024 * 1024;

const PullRequestSchema = z
  .object({
    title: z.string().min(1).max(256).optional(),
    body: z.string().max(65_536).optional(),
  })
  .strict();

export const AgentResultSchema = z
  .object({
    summary: z.string().max(20_000).optional(),
    tokens_in: z.number().int().nonnegative().optional(),
    tokens_out: z.number().int().nonnegative().optional(),
    cost_usd: z.number().nonnegative().finite().optional(),
    pull_request: PullRequestSchema.optional(),
  })
  .strict();

export type AgentResult = z.infer<typeof AgentResultSchema>;

export type ResultFileReading = { tag: "Absent" } | { tag: "Read"; result: AgentResult } | { tag: "Ignored"; reason: string };

/**
 * The fields at fault and what is wrong with them: zod's messages for our schema, which quote
 * none of the input, and no key the agent made up (neither its name nor its value).
 */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.map((p) => (typeof p === "number" || KNOWN_FIELDS.has(String(p)) ? String(p) : "?")).join(".");
      const what = issue.code === "unrecognized_keys" ? `${issue.keys.length} unknown field(s)` : issue.message;
      return `${path || "(root)"}: ${what}`;
    })
    .join("; ");
}

const KNOWN_FIELDS = new Set([...Object.keys(AgentResultSchema.shape), ...Object.keys(PullRequestSchema.shape)]);

/** Reads and validates the result file; never throws. */
export async function readResultFile(path: string): Promise<ResultFileReading> {
  const file = await readAgentFile(path, MAX_RESULT_FILE_BYTES);
  if (file.tag === "Absent") return file;
  if (file.tag !== "Read") return { tag: "Ignored", reason: file.reason };
  let data: unknown;
  try {
    data = JSON.parse(file.data.toString("utf8"));
  } catch {
    return { tag: "Ignored", reason: "it is not valid JSON" };
  }
  const parsed = AgentResultSchema.safeParse(data);
  if (!parsed.success) return { tag: "Ignored", reason: `it does not match the expected shape (${describeIssues(parsed.error)})` };
  return { tag: "Read", result: parsed.data };
}
