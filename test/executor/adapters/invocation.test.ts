import { describe, expect, it } from "vitest";
import {
  claudeInvocation,
  codexInvocation,
  commandInvocation,
  inferAgentKind,
  type AgentInvocation,
} from "../../../lib/executor/adapters";
import { AttemptFailureError } from "../../../lib/executor/attempt-failure-error";
import { agent } from "./real-cli";

function refused(fn: () => AgentInvocation): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AttemptFailureError);
    expect((err as AttemptFailureError).failure).toMatchObject({ kind: "AgentFailure", category: "configuration", retryable: false });
    return (err as Error).message;
  }
  throw new Error("expected the invocation to be refused");
}

describe("claude", () => {
  const base = agent({ kind: "claude", command: ["claude"] });

  it("derives the argv from [claude]; the prompt on stdin, then closed", () => {
    const inv = claudeInvocation(base, { prompt: "Fix it." });
    expect(inv.file).toBe("claude");
    expect(inv.args).toEqual(["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--strict-mcp-config"]);
    expect(inv.stdin).toEqual({ text: "Fix it.", close: true });
    expect(inv.encodeIntervention).toBeNull();
    expect(inv.model).toBeNull();
  });

  it("keeps a command that already has the flags, adding none twice", () => {
    const inv = claudeInvocation(
      { ...base, command: ["claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"] },
      { prompt: "x" },
    );
    expect(inv.args).toEqual(["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--strict-mcp-config"]);
  });

  it("passes the model, max turns, tools, MCP config and the session to resume", () => {
    const inv = claudeInvocation(
      {
        ...base,
        model: "claude-sonnet-4-5",
        models: ["claude-opus-4-1"],
        maxTurns: 30,
        allowedTools: ["Bash(git:*)", "Edit"],
        disallowedTools: ["WebFetch"],
        mcpConfig: "/etc/atelier/mcp.json",
      },
      { prompt: "x", model: "claude-opus-4-1", resumeSession: "2b1c0f6e-8d4a-4c3e-9f7a-0123456789ab" },
    );
    expect(inv.args.slice(5)).toEqual([
      "--model", "claude-opus-4-1",
      "--max-turns", "30",
      "--allowedTools", "Bash(git:*),Edit",
      "--disallowedTools", "WebFetch",
      "--strict-mcp-config",
      "--mcp-config", "/etc/atelier/mcp.json",
      "--resume", "2b1c0f6e-8d4a-4c3e-9f7a-0123456789ab",
    ]);
    expect(inv.model).toBe("claude-opus-4-1");
  });

  it("sets the switches it needs; the roster's env is passed as it is; its retries are capped", () => {
    const inv = claudeInvocation({ ...base, env: { ANTHROPIC_BASE_URL: "https://gateway.example/anthropic", CLAUDE_CODE_MAX_RETRIES: "10" } }, { prompt: "x" });
    expect(inv.env).toEqual({
      ANTHROPIC_BASE_URL: "https://gateway.example/anthropic",
      IS_SANDBOX: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_MAX_RETRIES: "3",
    });
    expect(claudeInvocation(base, { prompt: "x" }).env.CLAUDE_CODE_MAX_RETRIES).toBe("2");
    expect(claudeInvocation({ ...base, env: { CLAUDE_CODE_MAX_RETRIES: "0" } }, { prompt: "x" }).env.CLAUDE_CODE_MAX_RETRIES).toBe("0");
  });

  it("with intervene, speaks stream-json on stdin and leaves it open", () => {
    const inv = claudeInvocation({ ...base, intervene: true }, { prompt: "Fix it." });
    expect(inv.args.slice(-2)).toEqual(["--input-format", "stream-json"]);
    expect(inv.stdin.close).toBe(false);
    expect(JSON.parse(inv.stdin.text)).toEqual({ type: "user", message: { role: "user", content: [{ type: "text", text: "Fix it." }] } });
    expect(JSON.parse(inv.encodeIntervention!("Also the tests"))).toMatchObject({ type: "user" });
  });

  it.each([
    [["claude", "--model", "opus"], "remove --model from command: set model:"],
    [["claude", "--max-turns=5"], "remove --max-turns=5 from command: set max_turns:"],
    [["claude", "--allowedTools", "Bash"], "set allowed_tools:"],
    [["claude", "--resume", "abc"], "Atelier resumes the Attempt's session itself"],
    [["claude", "--input-format", "text"], "Atelier picks the input format"],
    [["claude", "-p", "--output-format", "text"], "remove --output-format text"],
  ])("refuses %j", (command, fragment) => {
    expect(refused(() => claudeInvocation({ ...base, command }, { prompt: "x" }))).toContain(fragment);
  });

  it("a Loop may pick only a model the agent lists", () => {
    const listed = { ...base, model: "claude-sonnet-4-5", models: ["claude-haiku-4-5"] };
    expect(claudeInvocation(listed, { prompt: "x", model: "claude-haiku-4-5" }).model).toBe("claude-haiku-4-5");
    expect(claudeInvocation(listed, { prompt: "x", model: null }).model).toBe("claude-sonnet-4-5");
    expect(refused(() => claudeInvocation(listed, { prompt: "x", model: "gpt-5" }))).toContain(
      "the Loop asks for model gpt-5, which is not among the agent's models (claude-sonnet-4-5, claude-haiku-4-5)",
    );
    expect(refused(() => claudeInvocation(base, { prompt: "x", model: "gpt-5" }))).toContain("the agent lists no models");
  });
});

describe("codex", () => {
  const base = agent({ kind: "codex", command: ["codex", "exec"] });

  it("derives codex exec --json with its sandbox bypassed, the prompt on stdin (-), then closed", () => {
    const inv = codexInvocation({ ...base, command: ["codex"] }, { prompt: "Fix it." });
    expect(inv.file).toBe("codex");
    expect(inv.args).toEqual([
      "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
      "-c", "analytics.enabled=false", "-c", "features.plugins=false",
      "-",
    ]);
    expect(inv.stdin).toEqual({ text: "Fix it.", close: true });
    expect(inv.encodeIntervention).toBeNull();
    expect(inv.env).toEqual({ NO_COLOR: "1" });
  });

  it("a custom endpoint becomes a model provider with capped retries; the model is -m", () => {
    const inv = codexInvocation({ ...base, model: "gpt-5.5", env: { OPENAI_BASE_URL: "https://gateway.example/openai/v1" } }, { prompt: "x" });
    expect(inv.args).toEqual([
      "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
      "-c", "analytics.enabled=false", "-c", "features.plugins=false",
      "-m", "gpt-5.5",
      "-c", 'model_provider="atelier"',
      "-c", 'model_providers.atelier.name="atelier"',
      "-c", 'model_providers.atelier.base_url="https://gateway.example/openai/v1"',
      "-c", 'model_providers.atelier.wire_api="responses"',
      "-c", 'model_providers.atelier.env_key="OPENAI_API_KEY"',
      "-c", "model_providers.atelier.request_max_retries=2",
      "-c", "model_providers.atelier.stream_max_retries=2",
      "-",
    ]);
    expect(inv.env.OPENAI_BASE_URL).toBe("https://gateway.example/openai/v1");
  });

  it("a session to resume that is no session id is refused, never an argument (a forged result line's session_id)", () => {
    for (const forged of ["--mcp-config=/tmp/evil.json", "x --dangerously-skip-permissions", "-c", "../../etc"]) {
      expect(() => codexInvocation({ ...base, command: ["codex", "exec"] }, { prompt: "x", resumeSession: forged })).toThrow(/is not a session id/);
      expect(() => claudeInvocation({ ...base, kind: "claude", command: ["claude"] }, { prompt: "x", resumeSession: forged })).toThrow(/is not a session id/);
    }
  });

  it("the gateway's local URL of a brokered model API becomes its model provider", () => {
    const inv = codexInvocation({ ...base, command: ["codex", "exec"] }, { prompt: "x", modelApiUrl: "http://127.0.0.1:3129" });
    expect(inv.args).toContain('model_providers.atelier.base_url="http://127.0.0.1:3129"');
    expect(inv.args).toContain('model_providers.atelier.env_key="OPENAI_API_KEY"');
  });

  it("resumes with codex exec resume <thread_id> -", () => {
    const inv = codexInvocation({ ...base, command: ["codex", "exec", "--json", "-"] }, { prompt: "x", resumeSession: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
    expect(inv.args).toEqual([
      "exec", "resume", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
      "-c", "analytics.enabled=false", "-c", "features.plugins=false",
      "0199a213-81c0-7800-8aa1-bbab2a035a53", "-",
    ]);
  });

  it.each([
    [["codex", "exec", "--full-auto", "--json", "-"], "remove --full-auto from command: it no longer exists"],
    [["codex", "exec", "--sandbox", "workspace-write"], "could not commit"],
    [["codex", "exec", "-m", "o3"], "set model:"],
    [["codex", "login"], "Atelier runs `codex exec`"],
    [["codex", "exec", "resume", "--last"], "remove resume from command"],
  ])("refuses %j", (command, fragment) => {
    expect(refused(() => codexInvocation({ ...base, command }, { prompt: "x" }))).toContain(fragment);
  });

  it("refuses Claude Code's settings, and a provider given twice", () => {
    expect(refused(() => codexInvocation({ ...base, maxTurns: 3 }, { prompt: "x" }))).toContain("max_turns is a Claude Code setting");
    expect(
      refused(() =>
        codexInvocation({ ...base, command: ["codex", "exec", "-c", "model_provider=x"], env: { OPENAI_BASE_URL: "http://h/v1" } }, { prompt: "x" }),
      ),
    ).toContain("keep one");
  });
});

describe("command", () => {
  const base = agent({ kind: "command", command: ["aider", "--yes-always"], env: { AIDER_DARK_MODE: "false" } });

  it("runs the argv as it is, the prompt on stdin, closed unless intervene", () => {
    expect(commandInvocation(base, { prompt: "x" })).toMatchObject({ file: "aider", args: ["--yes-always"], env: { AIDER_DARK_MODE: "false" }, stdin: { text: "x", close: true }, encodeIntervention: null });
    const open = commandInvocation({ ...base, intervene: true }, { prompt: "x" });
    expect(open.stdin).toEqual({ text: "x\n", close: false });
    expect(open.encodeIntervention!("more")).toBe("more\n");
  });
});

describe("inferAgentKind", () => {
  it.each([
    [["claude", "-p"], "claude"],
    [["/usr/local/bin/claude"], "claude"],
    [["node_modules/.bin/codex", "exec"], "codex"],
    [["codex.js"], "codex"],
    [["aider"], "command"],
    [["atelier-demo-agent"], "command"],
    [["claude-wrapper"], "command"],
    [[], "command"],
  ])("%j is %s", (command, kind) => {
    expect(inferAgentKind(command)).toBe(kind);
  });
});
