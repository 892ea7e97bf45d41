import { describe, expect, it } from "vitest";
import { defaultInstanceConfig, parseInstanceConfig } from "../../lib/config/roster";
import { unconfinedAgentsWarning } from "../../lib/dashboard/sandbox-banner";

describe("the unconfined-agents banner", () => {
  it("says nothing while agents run sandboxed (the default)", () => {
    expect(unconfinedAgentsWarning(defaultInstanceConfig())).toBeNull();
    expect(unconfinedAgentsWarning(parseInstanceConfig("sandbox: on\n", "atelier.config.yml"))).toBeNull();
  });

  it("says in one sentence what sandbox: off means, naming the file that says it", () => {
    const warning = unconfinedAgentsWarning(parseInstanceConfig("sandbox: off\n", "/etc/atelier/atelier.config.yml"));
    expect(warning).toMatch(/^Agents run without a sandbox \(sandbox: off in \/etc\/atelier\/atelier\.config\.yml\)/);
  });
});
