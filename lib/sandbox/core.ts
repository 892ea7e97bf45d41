import { SimClock } from "./sim-clock";
import { RequestCounters } from "./counters";
import { Faults } from "./faults";
import { GitProcesses } from "./git-process";
import { GitRepos } from "./git-repos";
import type { SimAccount, SimIssue, SimRepo } from "./model";
import { RateLimits } from "./sim-rate-limit";
import { SecondaryLimit } from "./secondary-limit";
import type { RenderContext } from "./render/context";
import type { SimEvent } from "./state/events";
import { requirePull } from "./state/pulls";
import { SimState } from "./state/sim-state";
import { webhookFor } from "./webhook-messages";
import { WebhookDispatcher } from "./webhooks";

export interface UnknownRequest {
  method: string;
  path: string;
  at: string;
}

const ALWAYS_DELIVERED = new Set(["installation", "installation_repositories"]);

/**
 * The running simulator's parts, shared by the HTTP layer and the control API: state, clock,
 * git, webhooks, counters, rate limits and injected faults.
 */
export class SimCore {
  readonly clock = new SimClock();
  readonly state: SimState;
  readonly processes = new GitProcesses();
  readonly git: GitRepos;
  readonly counters = new RequestCounters();
  readonly rateLimits: RateLimits;
  readonly faults = new Faults();
  readonly secondaryLimit: SecondaryLimit;
  readonly unknownRequests: UnknownRequest[] = [];
  readonly webhooks: WebhookDispatcher;
  baseUrl = "http://127.0.0.1";
  private readonly mergeability = new Map<string, Promise<void>>();

  constructor(
    readonly dataDir: string,
    private readonly verbose: boolean,
  ) {
    this.state = new SimState(this.clock);
    this.git = new GitRepos(`${dataDir}/repos`, this.processes, this.clock);
    this.rateLimits = new RateLimits(this.clock);
    this.secondaryLimit = new SecondaryLimit(this.clock);
    this.webhooks = new WebhookDispatcher(this.clock, () => this.state.app, (line) => this.log(line));
    this.state.onEvent((event) => this.deliver(event));
  }

  get render(): RenderContext {
    return { state: this.state, baseUrl: this.baseUrl };
  }

  log(line: string): void {
    if (this.verbose) console.log(`[sim] ${line}`);
  }

  private deliver(event: SimEvent): void {
    const message = webhookFor(this.render, event);
    if (!message) return;
    const { installation } = message;
    if (!ALWAYS_DELIVERED.has(message.event)) {
      if (installation.suspendedAt !== null) return;
      if (!installation.events.includes(message.event)) return;
    }
    this.webhooks.enqueue(message);
  }

  /** Creates a repository: a bare git repo with a first commit on `main`, and its record. */
  async createRepository(owner: SimAccount, name: string, files: Record<string, string> = {}, description: string | null = null): Promise<SimRepo> {
    if (this.state.findRepo(owner.login, name)) throw new Error(`repository ${owner.login}/${name} already exists`);
    const gitDir = await this.git.freeDirFor(owner.login, name);
    await this.git.init(gitDir, "main");
    await this.git.commitFiles(gitDir, {
      branch: "main",
      files: { "README.md": `# ${name}\n\nA repository of the Atelier sandbox.\n`, ...files },
      message: "Initial commit",
      author: { name: owner.login, email: `${owner.login}@users.noreply.sim` },
    });
    return this.state.addRepo(owner, name, gitDir, description);
  }

  /**
   * GitHub computes `mergeable` in the background after a read finds it null: the read
   * answers null, a later one true/false. `updated_at` does not move.
   */
  requestMergeability(repo: SimRepo, item: SimIssue): void {
    void this.computeMergeability(repo, item);
  }

  computeMergeability(repo: SimRepo, item: SimIssue): Promise<void> {
    const pull = requirePull(item);
    if (pull.mergeable !== null || item.state !== "open") return Promise.resolve();
    const key = `${repo.id}#${item.number}`;
    const running = this.mergeability.get(key);
    if (running) return running;
    const head = pull.headSha;
    const job = (async () => {
      let value = pull.mergeableOverride;
      if (value === null) {
        const base = await this.git.branchSha(repo.gitDir, pull.baseRef).catch(() => null);
        value = base ? (await this.git.mergeTree(repo.gitDir, base, head).catch(() => ({ clean: false }))).clean : false;
      }
      if (pull.headSha === head && pull.mergeable === null) pull.mergeable = value;
    })().finally(() => this.mergeability.delete(key));
    this.mergeability.set(key, job);
    return job;
  }

  async close(): Promise<void> {
    this.processes.killAll();
  }
}
