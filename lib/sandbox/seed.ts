import type { SimControl } from "./control";
import { DEMO_ENVIRONMENT, DEMO_PROJECT_FILES } from "./demo-project";

export const DEMO_CONFIG = `# Atelier loops for this repository (sandbox demo)
labels:
  - { name: ready-for-agent, color: 0e8a16, description: Atelier may start an agent on it }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    approval: required
    max_cycles: 3
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
`;

const LABELS = [
  { name: "ready-for-agent", color: "0e8a16", description: "Atelier may start an agent on it" },
  { name: "bug", color: "d73a4a", description: "Something isn't working" },
  { name: "enhancement", color: "a2eeef", description: "New feature or request" },
];

/**
 * The demo world: org `demo-org` with `webapp` and `api` (both with `.github/atelier.yml`;
 * `webapp` also carries a small Node project with tests and an `environment:`, demo-project.ts),
 * users octo-admin (admin), octo-writer (write), octo-reader (read), the App installed on the
 * org for both repositories, labels, and a few issues. octo-admin is the default user.
 */
export async function seedDemo(sim: SimControl): Promise<void> {
  sim.createOrg({ login: "demo-org", name: "Demo Org" });
  for (const login of ["octo-admin", "octo-writer", "octo-reader"]) sim.createUser({ login });
  sim.setDefaultUser({ login: "octo-admin" });
  for (const name of ["webapp", "api"]) {
    const repo = `demo-org/${name}`;
    const files = name === "webapp" ? { ...DEMO_PROJECT_FILES, ".github/atelier.yml": `${DEMO_CONFIG}${DEMO_ENVIRONMENT}` } : { ".github/atelier.yml": DEMO_CONFIG };
    await sim.createRepo({ owner: "demo-org", name, files, description: `The demo ${name}` });
    sim.setUserPermission({ repo, login: "octo-admin", permission: "admin" });
    sim.setUserPermission({ repo, login: "octo-writer", permission: "write" });
    sim.setUserPermission({ repo, login: "octo-reader", permission: "read" });
  }
  sim.createInstallation({ account: "demo-org", repos: ["webapp", "api"] });
  for (const name of ["webapp", "api"]) {
    for (const label of LABELS) sim.createLabel({ repo: `demo-org/${name}`, ...label });
  }
  sim.createIssue({ repo: "demo-org/webapp", title: "Add a dark mode toggle", body: "The settings page needs a dark mode switch.", labels: ["enhancement"] });
  sim.createIssue({ repo: "demo-org/webapp", title: "Fix the typo on the login page", body: "It says 'Sing in'.", labels: ["bug"], login: "octo-writer" });
  sim.createIssue({ repo: "demo-org/api", title: "Return 404 for unknown users", body: "GET /users/:id answers 500 for an unknown id.", labels: ["bug"] });
}
