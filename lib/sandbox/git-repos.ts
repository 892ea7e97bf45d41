import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { SimClock } from "./sim-clock";
import type { GitProcesses } from "./git-process";

export interface CommitAuthor {
  name: string;
  email: string;
}

export interface TreeEntry {
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  path: string;
  size: number;
}

const ZERO = "0000000000000000000000000000000000000000";

/** One commit of a push, as GitHub's push webhook lists it. */
export interface PushedCommit {
  id: string;
  message: string;
  author: CommitAuthor;
  /** Epoch ms of the author date. */
  timestamp: number;
  added: string[];
  removed: string[];
  modified: string[];
}

const FIELD = "\x1f";
const RECORD = "\x1e";

function parseLog(out: string): PushedCommit[] {
  return out
    .split(RECORD)
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const [id = "", name = "", email = "", seconds = "0", message = "", files = ""] = chunk.split(FIELD);
      const commit: PushedCommit = { id: id.trim(), message: message.trim(), author: { name, email }, timestamp: Number(seconds) * 1000, added: [], removed: [], modified: [] };
      for (const line of files.split("\n")) {
        const [status = "", path] = line.split("\t");
        if (!path) continue;
        if (status === "A") commit.added.push(path);
        else if (status === "D") commit.removed.push(path);
        else commit.modified.push(path);
      }
      return commit;
    });
}

/**
 * The bare repositories on disk (one per simulated repository, under `<root>/<owner>/<name>.git`)
 * and the plumbing the simulator needs: commit files without a work tree, read a file at a
 * ref, resolve a branch, list branches, test mergeability.
 */
export class GitRepos {
  constructor(
    readonly root: string,
    private readonly git: GitProcesses,
    private readonly clock: SimClock,
  ) {}

  dirFor(owner: string, name: string): string {
    return join(this.root, owner.toLowerCase(), `${name.toLowerCase()}.git`);
  }

  /** dirFor, or beside it when a repository renamed or deleted since still holds that directory. */
  async freeDirFor(owner: string, name: string): Promise<string> {
    const dir = this.dirFor(owner, name);
    for (let n = 2; ; n++) {
      const candidate = n === 2 ? dir : dir.replace(/\.git$/, `.${n}.git`);
      if (!(await stat(candidate).catch(() => null))) return candidate;
    }
  }

  async init(gitDir: string, defaultBranch: string): Promise<void> {
    await mkdir(gitDir, { recursive: true });
    await this.git.run(["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`, gitDir], { cwd: this.root });
    await this.git.run(["config", "http.receivepack", "true"], { cwd: gitDir });
    await this.git.run(["config", "uploadpack.allowAnySHA1InWant", "true"], { cwd: gitDir });
  }

  async remove(gitDir: string): Promise<void> {
    await rm(gitDir, { recursive: true, force: true });
  }

  /** The sha of refs/heads/<branch>, or null when the branch does not exist. */
  async branchSha(gitDir: string, branch: string): Promise<string | null> {
    const { stdout, code } = await this.git.run(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], { cwd: gitDir, okCodes: [1, 128] });
    return code === 0 ? stdout.toString("utf8").trim() : null;
  }

  /** Resolves a branch name, tag or sha to a commit sha; null when unknown. */
  async resolve(gitDir: string, ref: string): Promise<string | null> {
    if (!/^[\w./-]+$/.test(ref) || ref.startsWith("-")) return null;
    const { stdout, code } = await this.git.run(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: gitDir, okCodes: [1, 128] });
    return code === 0 ? stdout.toString("utf8").trim() : null;
  }

  /** branch name → sha, for every branch. */
  async branches(gitDir: string): Promise<Map<string, string>> {
    const { stdout } = await this.git.run(["for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads/"], { cwd: gitDir });
    const result = new Map<string, string>();
    for (const line of stdout.toString("utf8").split("\n")) {
      const [name, sha] = line.split(" ");
      if (name && sha) result.set(name, sha);
    }
    return result;
  }

  /** The commit a full ref (`refs/heads/x`, `refs/atelier/held/y`) points at, or null when it does not exist. */
  async refSha(gitDir: string, ref: string): Promise<string | null> {
    if (!isRefName(ref)) return null;
    const { stdout, code } = await this.git.run(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: gitDir, okCodes: [1, 128] });
    return code === 0 ? stdout.toString("utf8").trim() : null;
  }

  /** Moves (or creates, `old` ZERO) a full ref to `sha`, only from `old`; `sha` ZERO deletes it. */
  async updateRef(gitDir: string, ref: string, sha: string, old: string): Promise<void> {
    if (sha === ZERO) await this.git.run(["update-ref", "-d", ref, old], { cwd: gitDir });
    else await this.git.run(["update-ref", ref, sha, old], { cwd: gitDir });
  }

  /** Is `ancestor` reachable from `descendant`? */
  async isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
    const { code } = await this.git.run(["merge-base", "--is-ancestor", ancestor, descendant], { cwd: gitDir, okCodes: [1] });
    return code === 0;
  }

  /** Would merging head into base succeed without conflicts? (git merge-tree --write-tree) */
  async mergeTree(gitDir: string, base: string, head: string): Promise<{ clean: boolean; tree: string | null }> {
    const { stdout, code } = await this.git.run(["merge-tree", "--write-tree", "--no-messages", base, head], { cwd: gitDir, okCodes: [1] });
    const tree = stdout.toString("utf8").split("\n")[0]?.trim() ?? null;
    return { clean: code === 0, tree: code === 0 ? tree : null };
  }

  private env(author: CommitAuthor): NodeJS.ProcessEnv {
    const date = `@${Math.floor(this.clock.now() / 1000)} +0000`;
    return {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: author.name,
      GIT_COMMITTER_EMAIL: author.email,
      GIT_COMMITTER_DATE: date,
    };
  }

  /**
   * Commits files onto a branch without a work tree (temporary index, write-tree,
   * commit-tree, update-ref). A new branch starts from `from` (default: the repository's
   * default branch; none for the first commit). Returns the before and after shas.
   */
  async commitFiles(
    gitDir: string,
    input: { branch: string; files: Record<string, string>; message: string; author: CommitAuthor; from?: string },
  ): Promise<{ before: string; after: string }> {
    const current = await this.branchSha(gitDir, input.branch);
    const parent = current ?? (input.from ? await this.resolve(gitDir, input.from) : null);
    if (input.from && !current && !parent) throw new Error(`cannot branch ${input.branch} from ${input.from}: no such ref`);
    const index = join(this.root, `.index-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const env = { ...this.env(input.author), GIT_INDEX_FILE: index };
    try {
      if (parent) await this.git.run(["read-tree", parent], { cwd: gitDir, env });
      else await this.git.run(["read-tree", "--empty"], { cwd: gitDir, env });
      for (const [path, content] of Object.entries(input.files)) {
        const blob = (await this.git.run(["hash-object", "-w", "--stdin"], { cwd: gitDir, input: content, env })).stdout.toString("utf8").trim();
        await this.git.run(["update-index", "--add", "--cacheinfo", `100644,${blob},${path}`], { cwd: gitDir, env });
      }
      const tree = (await this.git.run(["write-tree"], { cwd: gitDir, env })).stdout.toString("utf8").trim();
      const after = (
        await this.git.run(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", input.message], { cwd: gitDir, env })
      ).stdout.toString("utf8").trim();
      await this.git.run(["update-ref", `refs/heads/${input.branch}`, after, current ?? ZERO], { cwd: gitDir, env });
      return { before: current ?? ZERO, after };
    } finally {
      await rm(index, { force: true });
    }
  }

  /** A merge commit of head into base (fails when they conflict). Returns the new base sha. */
  async merge(gitDir: string, input: { base: string; head: string; message: string; author: CommitAuthor }): Promise<string> {
    const baseSha = await this.branchSha(gitDir, input.base);
    const headSha = await this.resolve(gitDir, input.head);
    if (!baseSha || !headSha) throw new Error(`cannot merge ${input.head} into ${input.base}: missing branch`);
    const { clean, tree } = await this.mergeTree(gitDir, baseSha, headSha);
    if (!clean || !tree) throw new Error(`${input.head} conflicts with ${input.base}`);
    const env = this.env(input.author);
    const sha = (await this.git.run(["commit-tree", tree, "-p", baseSha, "-p", headSha, "-m", input.message], { cwd: gitDir, env })).stdout
      .toString("utf8")
      .trim();
    await this.git.run(["update-ref", `refs/heads/${input.base}`, sha, baseSha], { cwd: gitDir });
    return sha;
  }

  /** The entries at `path` of `ref`: one blob entry for a file, the children for a directory. */
  async entries(gitDir: string, ref: string, path: string): Promise<{ kind: "file" | "dir"; entries: TreeEntry[] } | null> {
    const commit = await this.resolve(gitDir, ref);
    if (!commit) return null;
    const clean = path.replace(/^\/+|\/+$/g, "");
    const parse = (out: Buffer): TreeEntry[] =>
      out
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [meta = "", entryPath = ""] = line.split("\t");
          const [mode = "", type = "blob", sha = "", size = "0"] = meta.trim().split(/\s+/);
          return { mode, type: type as TreeEntry["type"], sha, path: entryPath, size: Number(size) || 0 };
        });
    if (!clean) return { kind: "dir", entries: parse((await this.git.run(["ls-tree", "-l", commit], { cwd: gitDir })).stdout) };
    const self = parse((await this.git.run(["ls-tree", "-l", commit, "--", clean], { cwd: gitDir })).stdout)[0];
    if (!self || self.path !== clean) return null;
    if (self.type === "blob") return { kind: "file", entries: [self] };
    return { kind: "dir", entries: parse((await this.git.run(["ls-tree", "-l", commit, "--", `${clean}/`], { cwd: gitDir })).stdout) };
  }

  /**
   * The commits a push of `branch` from `before` to `after` brought, oldest first: those
   * `after` has and `before` had not, or for a new branch those no other branch has (as
   * GitHub lists them); a merge lists what it changed against its first parent.
   */
  async pushedCommits(gitDir: string, branch: string, before: string, after: string): Promise<PushedCommit[]> {
    const range = before === ZERO ? [after, "--not", `--exclude=${branch}`, "--branches"] : [after, `^${before}`];
    const format = `--format=${RECORD}%H${FIELD}%an${FIELD}%ae${FIELD}%at${FIELD}%B${FIELD}`;
    const { stdout } = await this.git.run(["log", "--reverse", "--no-renames", "--diff-merges=first-parent", "--name-status", format, ...range, "--"], { cwd: gitDir });
    return parseLog(stdout.toString("utf8"));
  }

  async blob(gitDir: string, sha: string): Promise<Buffer> {
    return (await this.git.run(["cat-file", "blob", sha], { cwd: gitDir })).stdout;
  }
}

export { ZERO as ZERO_SHA };

/** A full ref name GitHub would take: `refs/` and at least two more parts, no `..`, no odd characters. */
export function isRefName(ref: string): boolean {
  return /^refs\/[\w.-]+\/[\w./-]+$/.test(ref) && !ref.includes("..") && !ref.endsWith("/") && !ref.endsWith(".lock");
}
