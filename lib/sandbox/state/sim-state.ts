import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { SimClock } from "../sim-clock";
import { notFound } from "../api-error";
import type {
  RepoPermission,
  SimAccount,
  SimApp,
  SimCheckRun,
  SimComment,
  SimCommitStatus,
  SimInstallation,
  SimIssue,
  SimIssueEvent,
  SimReaction,
  SimRepo,
  SimReview,
  SimReviewComment,
  SimToken,
} from "../model";
import type { SimEvent, SimEventListener } from "./events";

const DEFAULT_APP_PERMISSIONS = {
  metadata: "read",
  contents: "write",
  issues: "write",
  pull_requests: "write",
  checks: "write",
  statuses: "read",
} as const;

export const DEFAULT_APP_EVENTS = ["repository", "issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment", "pull_request_review_thread", "label", "check_run", "check_suite", "status", "push"];

function nodeId(kind: string, id: number): string {
  return Buffer.from(`${kind}:${id}`).toString("base64").replace(/=+$/, "");
}

function secret(prefix: string, bytes = 20): string {
  return prefix + randomBytes(bytes).toString("hex");
}

/**
 * Everything the simulated GitHub knows, in memory. Lookups and the event plumbing live here;
 * the changes a person or an App can make live in the sibling modules (issues, labels, pulls,
 * checks, installations, tokens), each emitting the webhook events GitHub would.
 */
export class SimState {
  readonly accounts = new Map<number, SimAccount>();
  readonly repos = new Map<number, SimRepo>();
  /** Issues and pull requests, keyed `${repoId}#${number}`. */
  readonly items = new Map<string, SimIssue>();
  readonly comments = new Map<number, SimComment>();
  /** Reactions on issue comments, oldest first. */
  readonly reactions: SimReaction[] = [];
  readonly reviews = new Map<number, SimReview>();
  readonly reviewComments = new Map<number, SimReviewComment>();
  /** Every Item's events timeline, oldest first. */
  readonly issueEvents: SimIssueEvent[] = [];
  readonly checkRuns = new Map<number, SimCheckRun>();
  readonly checkSuites = new Map<string, number>();
  /** Commit statuses (other CI's), by id. */
  readonly statuses = new Map<number, SimCommitStatus>();
  /** Resolved review threads: the thread's first comment id → who resolved it. */
  readonly resolvedThreads = new Map<number, number>();
  readonly installations = new Map<number, SimInstallation>();
  readonly tokens = new Map<string, SimToken>();
  readonly app: SimApp;
  /** The user the sandbox's OAuth page signs in when the request names nobody. */
  defaultOAuthLogin: string | null = null;
  /**
   * Ids start at a random thousand below a billion, as GitHub's are large and unrelated: two
   * simulators (test files sharing one database) do not hand out the same repository id.
   */
  private lastId = 1000 * (1 + Math.floor(Math.random() * 999_999));
  private readonly listeners: SimEventListener[] = [];

  constructor(readonly clock: SimClock) {
    const now = clock.now();
    const { privateKey, publicKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const owner = this.createAccount("atelier-sim", "Organization");
    const node = this.newNode("App");
    const slug = "atelier-sandbox";
    const bot = this.createAccount(`${slug}[bot]`, "Bot");
    this.app = {
      ...node,
      slug,
      name: "Atelier (sandbox)",
      description: "The GitHub App of the Atelier sandbox",
      ownerId: owner.id,
      botUserId: bot.id,
      privateKey,
      publicKey,
      webhookSecret: secret("whsec_", 16),
      clientId: `Iv1.${randomBytes(8).toString("hex")}`,
      clientSecret: randomBytes(20).toString("hex"),
      webhookUrl: null,
      callbackUrl: null,
      permissions: { ...DEFAULT_APP_PERMISSIONS },
      events: [...DEFAULT_APP_EVENTS],
      createdAt: now,
      updatedAt: now,
    };
  }

  nextId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  /** The next id and its GraphQL node id, for a new object of `kind`: `{ ...state.newNode("Issue"), … }`. */
  newNode(kind: string): { id: number; nodeId: string } {
    const id = this.nextId();
    return { id, nodeId: nodeId(kind, id) };
  }

  nodeId(kind: string, id: number): string {
    return nodeId(kind, id);
  }

  newSecret(prefix: string): string {
    return secret(prefix);
  }

  onEvent(listener: SimEventListener): void {
    this.listeners.push(listener);
  }

  emit(event: SimEvent): void {
    this.recordIssueEvent(event);
    for (const listener of this.listeners) listener(event);
  }

  /** The timeline entry GitHub keeps for an Item's change, with the actor who made it. */
  private recordIssueEvent(event: SimEvent): void {
    if (event.event !== "issues" && event.event !== "pull_request") return;
    const kinds: Partial<Record<string, SimIssueEvent["event"]>> = {
      labeled: "labeled",
      unlabeled: "unlabeled",
      closed: "closed",
      reopened: "reopened",
      ready_for_review: "ready_for_review",
      converted_to_draft: "convert_to_draft",
    };
    const base = { repoId: event.repoId, number: event.number, actorId: event.senderId, createdAt: this.clock.now() };
    const add = (entry: Omit<SimIssueEvent, "id" | "nodeId">) => this.issueEvents.push({ ...this.newNode("IssueEvent"), ...entry });
    const kind = kinds[event.action];
    if (kind) add({ ...base, event: kind, ...(event.label ? { label: { name: event.label.name, color: event.label.color } } : {}) });
    const title = event.action === "edited" ? event.changes?.title : undefined;
    if (title) add({ ...base, event: "renamed", rename: { from: title.from, to: this.items.get(`${event.repoId}#${event.number}`)?.title ?? "" } });
  }

  /** An Item's events timeline, oldest first. */
  issueEventsOf(repo: SimRepo, number: number): SimIssueEvent[] {
    return this.issueEvents.filter((e) => e.repoId === repo.id && e.number === number);
  }

  // ----- accounts -----

  createAccount(login: string, type: SimAccount["type"], extra: { name?: string; email?: string } = {}): SimAccount {
    if (this.findAccount(login)) throw new Error(`account ${login} already exists`);
    const account: SimAccount = {
      ...this.newNode(type === "Organization" ? "Organization" : "User"),
      login,
      type,
      name: extra.name ?? null,
      email: extra.email ?? null,
      createdAt: this.clock.now(),
    };
    this.accounts.set(account.id, account);
    return account;
  }

  findAccount(login: string): SimAccount | undefined {
    const wanted = login.toLowerCase();
    for (const account of this.accounts.values()) if (account.login.toLowerCase() === wanted) return account;
    return undefined;
  }

  accountByLogin(login: string): SimAccount {
    const account = this.findAccount(login);
    if (!account) throw notFound();
    return account;
  }

  account(id: number): SimAccount {
    const account = this.accounts.get(id);
    if (!account) throw new Error(`no account ${id}`);
    return account;
  }

  get botUser(): SimAccount {
    return this.account(this.app.botUserId);
  }

  // ----- repositories -----

  addRepo(owner: SimAccount, name: string, gitDir: string, description: string | null = null): SimRepo {
    if (this.findRepo(owner.login, name)) throw new Error(`repository ${owner.login}/${name} already exists`);
    const now = this.clock.now();
    const repo: SimRepo = {
      ...this.newNode("Repository"),
      ownerId: owner.id,
      name,
      description,
      defaultBranch: "main",
      private: true,
      createdAt: now,
      updatedAt: now,
      pushedAt: now,
      nextNumber: 1,
      labels: new Map(),
      collaborators: new Map(),
      customRoles: new Map(),
      gitDir,
    };
    this.repos.set(repo.id, repo);
    return repo;
  }

  findRepo(owner: string, name: string): SimRepo | undefined {
    const full = `${owner}/${name}`.toLowerCase();
    for (const repo of this.repos.values()) if (this.fullName(repo).toLowerCase() === full) return repo;
    return undefined;
  }

  repoByFullName(fullName: string): SimRepo {
    const [owner, name] = fullName.split("/");
    const repo = owner && name ? this.findRepo(owner, name) : undefined;
    if (!repo) throw new Error(`no repository ${fullName} in the simulator`);
    return repo;
  }

  repo(id: number): SimRepo {
    const repo = this.repos.get(id);
    if (!repo) throw new Error(`no repository ${id}`);
    return repo;
  }

  fullName(repo: SimRepo): string {
    return `${this.account(repo.ownerId).login}/${repo.name}`;
  }

  permissionOf(repo: SimRepo, userId: number): RepoPermission {
    if (repo.ownerId === userId) return "admin";
    // GitHub reports read to anyone on a public repository
    return repo.collaborators.get(userId) ?? (repo.private ? "none" : "read");
  }

  /** The name of the person's role: a custom role's own name, else one of GitHub's five (or none). */
  roleNameOf(repo: SimRepo, userId: number): string {
    return repo.customRoles.get(userId) ?? this.permissionOf(repo, userId);
  }

  setPermission(repo: SimRepo, userId: number, permission: RepoPermission): void {
    repo.customRoles.delete(userId);
    if (permission === "none") repo.collaborators.delete(userId);
    else repo.collaborators.set(userId, permission);
  }

  /** Grants a custom role: the access of its base role, under its own name. */
  setCustomRole(repo: SimRepo, userId: number, name: string, base: RepoPermission): void {
    this.setPermission(repo, userId, base);
    repo.customRoles.set(userId, name);
  }

  // ----- items -----

  findItem(repo: SimRepo, number: number): SimIssue | undefined {
    return this.items.get(`${repo.id}#${number}`);
  }

  item(repo: SimRepo, number: number): SimIssue {
    const item = this.findItem(repo, number);
    if (!item) throw notFound();
    return item;
  }

  itemsOf(repo: SimRepo): SimIssue[] {
    return [...this.items.values()].filter((item) => item.repoId === repo.id);
  }

  commentsOf(repo: SimRepo, number: number): SimComment[] {
    return [...this.comments.values()].filter((c) => c.repoId === repo.id && c.issueNumber === number);
  }

  // ----- installations -----

  installation(id: number): SimInstallation {
    const installation = this.installations.get(id);
    if (!installation) throw notFound();
    return installation;
  }

  /** The repositories an installation covers right now. */
  installationRepos(installation: SimInstallation): SimRepo[] {
    return [...this.repos.values()].filter((repo) =>
      installation.repositorySelection === "all"
        ? repo.ownerId === installation.accountId
        : installation.repoIds.has(repo.id),
    );
  }

  installationForRepo(repo: SimRepo): SimInstallation | undefined {
    for (const installation of this.installations.values()) {
      if (this.installationRepos(installation).some((r) => r.id === repo.id)) return installation;
    }
    return undefined;
  }
}
