import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";

/**
 * Toolchains in the two configs: the instance's roster names folders under its toolchain
 * roots (a path outside them, or a link leading out of them, is refused on its line when the
 * file is loaded); a repository picks them by name, never by a path of the host.
 */

const scratch = mkdtempSync(join(tmpdir(), "atelier-toolchain-config-"));
const root = join(scratch, "toolchains");
const outside = join(scratch, "elsewhere");

function toolchain(dir: string): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "bin", "node-x"), "#!/bin/sh\necho node-x\n");
  chmodSync(join(dir, "bin", "node-x"), 0o755);
  return dir;
}
toolchain(join(root, "node-x"));
toolchain(join(root, "python-3.12"));
toolchain(outside);
symlinkSync(outside, join(root, "escape"));
symlinkSync("/", join(root, "slash"));
symlinkSync(join(root, "node-x"), join(root, "node-current"));
mkdirSync(join(root, "empty"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const roster = (toolchains: string, roots = `[${root}]`) =>
  parseInstanceConfig(`agents:\n  claude: { command: [claude, -p] }\ntoolchain_roots: ${roots}\ntoolchains:\n${toolchains}`, "atelier.config.yml");
const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
    return [];
  } catch (err) {
    return ((err as { details?: { problems?: string[] } }).details?.problems ?? [String(err)]);
  }
};

describe("toolchains: in the instance's roster", () => {
  it("names folders under a toolchain root; a link inside the root is followed to where it stays inside", () => {
    const cfg = roster(`  node-x: ${root}/node-x\n  python-3.12: ${root}/python-3.12/\n  node-current: ${root}/node-current\n`);
    expect(cfg.toolchains).toEqual({
      "node-x": { name: "node-x", path: join(root, "node-x"), root },
      "python-3.12": { name: "python-3.12", path: join(root, "python-3.12"), root },
      "node-current": { name: "node-current", path: join(root, "node-current"), root },
    });
  });

  it("attack: a path outside the roots, a link that leads out of its root, .. and a folder without bin/ are refused on their lines", () => {
    const problems = problemsOf(() =>
      roster(`  a: ${outside}\n  b: ${root}/escape\n  c: ${root}/slash\n  d: ${root}/../elsewhere\n  e: ${root}/empty\n  f: relative/path\n`),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^toolchains\.a \(line 5\): the toolchain a \(.*\) is outside the toolchain roots/),
      expect.stringMatching(/^toolchains\.b \(line 6\): the toolchain b \(.*\/escape\) leads to .*\/elsewhere, outside its toolchain root .* \(a link out of the root is refused\)/),
      expect.stringMatching(/^toolchains\.c \(line 7\): the toolchain c \(.*\/slash\) leads to \/, outside its toolchain root/),
      expect.stringMatching(/^toolchains\.d \(line 8\): the toolchain d .* is not an absolute path without \.\./),
      expect.stringMatching(/^toolchains\.e \(line 9\): the toolchain e .* has no bin\/ folder/),
      expect.stringMatching(/^toolchains\.f \(line 10\): the toolchain f .* is not an absolute path/),
    ]);
  });

  it("attack: a root that is the host's own (/, /etc, /home) or the sandbox's (/workspace) is refused", () => {
    const problems = problemsOf(() => roster(`  node-x: /opt/x/node-x\n`, "[/, /etc, /home, /workspace/tools]"));
    expect(problems).toEqual([
      expect.stringMatching(/^toolchain_roots\.0 \(line 3\): the toolchain root \/ is \/, which holds the host's own files/),
      expect.stringMatching(/^toolchain_roots\.1 \(line 3\): the toolchain root \/etc is \/etc/),
      expect.stringMatching(/^toolchain_roots\.2 \(line 3\): the toolchain root \/home is \/home/),
      expect.stringMatching(/^toolchain_roots\.3 \(line 3\): the toolchain root \/workspace\/tools is under \/workspace, which the sandbox has of its own/),
    ]);
  });

  it("without toolchain_roots the root is /opt/atelier/toolchains; a path this host does not have is left to the worker that mounts it", () => {
    const cfg = parseInstanceConfig("toolchains:\n  node-22: /opt/atelier/toolchains/node-22\n", "atelier.config.yml");
    expect(cfg.toolchains).toEqual({ "node-22": { name: "node-22", path: "/opt/atelier/toolchains/node-22", root: "/opt/atelier/toolchains" } });
    expect(problemsOf(() => parseInstanceConfig(`toolchains:\n  node-x: ${root}/node-x\n`, "atelier.config.yml"))).toEqual([
      expect.stringMatching(/^toolchains\.node-x \(line 2\): .* is outside the toolchain roots \(\/opt\/atelier\/toolchains\)/),
    ]);
  });
});

describe("toolchain: in a repository's environment", () => {
  const offered = roster(`  node-x: ${root}/node-x\n  python-3.12: ${root}/python-3.12\n`);
  const parse = (yaml: string) => parseRepositoryConfig(yaml, { roster: offered });
  const loop = "loops:\n  start-dev:\n    on: issues\n    agent: claude\n    prompt: go\n";

  it("picks one toolchain by name, or a list; a Loop's own replaces the file's", () => {
    const cfg = parse(`environment:\n  toolchain: node-x\n${loop}    environment: { toolchain: [python-3.12, node-x] }\n  other: { on: issues, agent: claude, prompt: go }\n`);
    expect(cfg.errors).toEqual([]);
    expect(cfg.loops.map((l) => [l.name, l.environment?.toolchains])).toEqual([
      ["start-dev", ["python-3.12", "node-x"]],
      ["other", ["node-x"]],
    ]);
  });

  it("an unknown name is an error on its line, with the names the instance offers", () => {
    const cfg = parse(`environment:\n  toolchain: [node-x, node-y]\n${loop}`);
    expect(cfg.loops).toEqual([]);
    expect(cfg.errors).toEqual([
      expect.objectContaining({ loop: null, token: "config_unknown_toolchain", path: "environment.toolchain.1", line: 2 }),
    ]);
    expect(cfg.errors[0]!.message).toContain('"node-y" is not a toolchain of this instance (did you mean node-x?): it offers node-x, python-3.12');
  });

  it("attack: a repository cannot name a host path as its toolchain", () => {
    for (const path of ["/usr/lib/node", `${root}/node-x`, "~/.nvm/versions/node/v22", "../node-x", "./node-x"]) {
      const cfg = parse(`${loop}    environment:\n      toolchain: ${JSON.stringify(path)}\n`);
      expect(cfg.loops).toEqual([]);
      expect(cfg.errors).toEqual([expect.objectContaining({ loop: "start-dev", token: "config_invalid", path: "loops.start-dev.environment.toolchain", line: 7 })]);
      expect(cfg.errors[0]!.message).toContain("is a path, and a repository cannot name a folder of the host");
    }
  });

  it("an instance with no toolchains says so", () => {
    const cfg = parseRepositoryConfig(`environment: { toolchain: node-x }\n${loop}`, { roster: parseInstanceConfig("agents:\n  claude: { command: [claude, -p] }\n", "r.yml") });
    expect(cfg.errors[0]!.message).toContain("it offers none");
  });
});
