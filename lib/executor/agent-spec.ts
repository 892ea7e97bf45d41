import type { AdapterAgent } from "./adapters/types";
import type { SandboxLimits } from "./agent-sandbox/policy";
import type { ApiProtocol } from "./agent-sandbox/usage-meter";

/** The agent's model API, brokered by the gateway: the agent gets a local base URL and a placeholder key. */
export interface ModelApiSpec {
  /** The upstream's base URL: https, or http to a loopback address (a local fake). */
  url: string;
  /** The NAME of the worker's variable holding the key; the gateway adds it, the agent never sees it. */
  secret: string;
  /** How the gateway authenticates and reads the usage. */
  protocol: ApiProtocol;
}

/** Another tool's HTTP API, brokered the same way (not metered). */
export interface ToolApiSpec {
  url: string;
  secret: string;
  /** The header the gateway sets: `scheme secret`, or the secret alone when scheme is null. */
  header: string;
  scheme: string | null;
  /** The variable that gives the tool its base URL (the local one). */
  env: string;
}

/** What the roster says a million tokens cost; cache tokens are priced as input when it says nothing of them. */
export interface TokenPrices {
  input: number;
  output: number;
  cacheRead: number | null;
  cacheWrite: number | null;
}

/** An Agent of the instance's roster, as the executor needs it (the roster's parser owns validation). */
export interface AgentSpec {
  /** argv; ["atelier-demo-agent"] runs the built-in demo agent. */
  command: string[];
  /** Wall-clock limit of one Attempt's agent process; fractions allowed. */
  max_attempt_minutes?: number;
  /** Names of worker environment variables handed to the agent (never a model key: see model_api). */
  secrets?: string[];
  /** The model API the gateway brokers and meters. */
  model_api?: ModelApiSpec;
  /** Other tools' APIs the gateway brokers. */
  apis?: ToolApiSpec[];
  /** Prices the tokens the gateway read. */
  token_prices?: TokenPrices;
  /** Whether an operator may write to the agent's stdin while it runs. */
  intervene?: boolean;
  /** Used to estimate the cost when the agent reports none (and as the floor of what it reports). */
  price_per_minute_usd?: number;
  /** Hosts (host, host:port, *.domain) the agent may reach through the sandbox's egress gateway. */
  egress?: string[];
  /** cgroup limits of its sandbox (defaults: agent-sandbox/policy.ts). */
  limits?: Partial<SandboxLimits>;
  /** Host paths bound read-only into the sandbox at the same path (tools outside /usr). */
  read_only_paths?: string[];
  /** The roster entry as its kind's adapter reads it; absent: the command runs as given, its output plain text. */
  adapter?: AdapterAgent;
}

export type NamedAgentSpec = AgentSpec & { name: string };

/** One transcript entry: a piece of the agent's output, or a line from Atelier itself. */
export interface OutputEntry {
  /**
   * "step": a transcript step the agent's adapter read from its output (adapters/step-entry.ts);
   * "setup": the output of the environment's setup (environment/run-setup.ts).
   */
  stream: "stdout" | "stderr" | "system" | "step" | "setup";
  text: string;
}

export type OutputSink = (entry: OutputEntry) => void;
