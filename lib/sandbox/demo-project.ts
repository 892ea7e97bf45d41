/**
 * The small Node project the sandbox's `demo-org/webapp` carries, so the demo shows an
 * environment: `setup: npm ci` installs its one dependency, `verify: npm test` runs its tests
 * (node's own test runner) on the agent's work. The dependency is vendored (`vendor/shout`,
 * installed as a copy by `install-links`) and the project's `.npmrc` says `offline=true`:
 * the demo reaches no registry, none is needed, and nothing leaves the machine.
 */
const PACKAGE_JSON = `{
  "name": "webapp",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node --test" },
  "dependencies": { "shout": "file:vendor/shout" }
}
`;

const PACKAGE_LOCK = `{
  "name": "webapp",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "webapp",
      "version": "1.0.0",
      "dependencies": {
        "shout": "file:vendor/shout"
      }
    },
    "node_modules/shout": {
      "version": "1.0.0",
      "resolved": "file:vendor/shout",
      "license": "MIT"
    }
  }
}
`;

const NPMRC = `# the demo installs its vendored dependency and never asks a registry
offline=true
install-links=true
audit=false
fund=false
update-notifier=false
`;

const GREET_TEST = `const { test } = require("node:test");
const assert = require("node:assert/strict");
const { existsSync, readdirSync, readFileSync } = require("node:fs");
const { join } = require("node:path");
const greet = require("../src/greet");

test("greet shouts through the dependency", () => {
  assert.equal(greet("ada"), "HELLO, ADA!");
});

test("every note the agent wrote is clean", () => {
  const dir = "atelier-demo";
  const notes = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".md")) : [];
  for (const note of notes) {
    const text = readFileSync(join(dir, note), "utf8");
    assert.ok(text.startsWith("# Atelier demo"), \`\${note} starts with its title\`);
    assert.ok(!text.includes("BROKEN"), \`\${note} says BROKEN\`);
  }
});
`;

/** The files of the demo project, by path. */
export const DEMO_PROJECT_FILES: Record<string, string> = {
  "package.json": PACKAGE_JSON,
  "package-lock.json": PACKAGE_LOCK,
  ".npmrc": NPMRC,
  ".gitignore": "node_modules/\n",
  "vendor/shout/package.json": `{ "name": "shout", "version": "1.0.0", "main": "index.js", "license": "MIT" }\n`,
  "vendor/shout/index.js": "module.exports = (text) => `${text.toUpperCase()}!`;\n",
  "src/greet.js": `const shout = require("shout");\n\nmodule.exports = (name) => shout(\`hello, \${name}\`);\n`,
  "test/greet.test.js": GREET_TEST,
};

/** The environment the demo project declares in its `.github/atelier.yml`. */
export const DEMO_ENVIRONMENT = `environment:
  setup: npm ci                   # installs the vendored dependency into node_modules
  verify: npm test                # Atelier runs the tests on the agent's work
`;
