import type { InstanceConfig } from "../config/roster";

/**
 * What every dashboard page says when the instance runs agents unconfined (`sandbox: off`):
 * one sentence, in red, so nobody mistakes such an instance for a safe one. Null otherwise.
 */
export function unconfinedAgentsWarning(config: Pick<InstanceConfig, "sandbox" | "source">): string | null {
  if (config.sandbox !== "off") return null;
  return `Agents run without a sandbox (sandbox: off in ${config.source ?? "atelier.config.yml"}): each one runs as the worker's user, with its files, secrets and network. Any agent steered by a hostile issue owns this instance.`;
}
