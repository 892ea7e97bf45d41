import { configurationError, pickModel, rosterEnv } from "./argv";
import { LineSplitter } from "./json-lines";
import type { AdapterAgent, AgentAdapter, AgentInvocation, AgentReport, InvocationOptions, StreamParser, TranscriptStep } from "./types";

/**
 * Any other command: its argv as the roster gives it, the prompt on stdin (closed unless
 * `intervene: true`, when each intervention is a line), and its output as plain text lines. It
 * reports nothing: usage comes from $ATELIER_RESULT_FILE or the estimate.
 */

export function commandInvocation(agent: AdapterAgent, options: InvocationOptions): AgentInvocation {
  const [file, ...args] = agent.command;
  if (!file) throw configurationError(agent, "command must name a program");
  const model = pickModel(agent, options.model);
  const prompt = options.prompt;
  if (agent.intervene) {
    return {
      file,
      args,
      env: rosterEnv(agent),
      model,
      stdin: { text: prompt.endsWith("\n") || prompt === "" ? prompt : `${prompt}\n`, close: false },
      encodeIntervention: (text) => (text.endsWith("\n") ? text : `${text}\n`),
    };
  }
  return { file, args, env: rosterEnv(agent), model, stdin: { text: prompt, close: true }, encodeIntervention: null };
}

export class PlainTextParser implements StreamParser {
  private readonly lines = { stdout: new LineSplitter(), stderr: new LineSplitter() };

  feed(chunk: string, stream: "stdout" | "stderr" = "stdout"): TranscriptStep[] {
    return this.lines[stream].push(chunk).map((l) => ({ type: "output", stream, text: l.text }));
  }

  end(): { steps: TranscriptStep[]; report: AgentReport } {
    const steps = (["stdout", "stderr"] as const).flatMap((stream) =>
      this.lines[stream].end().map((l): TranscriptStep => ({ type: "output", stream, text: l.text })),
    );
    return { steps, report: { sessionId: null, finalText: null, usage: null, failure: null } };
  }
}

export const commandAdapter: AgentAdapter = {
  kind: "command",
  invocation: commandInvocation,
  parser: () => new PlainTextParser(),
};
