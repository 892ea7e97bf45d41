import { GitHubApiError, validationFailed } from "../api-error";
import { actorId } from "../access";
import { branchPushed } from "../branch-pushed";
import { isRefName, ZERO_SHA } from "../git-repos";
import { asObject } from "../http-util";
import { param, repoOf, repoScoped, stringField, type RestContext } from "../rest";
import type { SimRepo } from "../model";

/**
 * Git references by REST, as GitHub serves them: read one, create one, move one (a fast forward
 * unless `force`), delete one. A branch that moves this way updates its pull requests and sends
 * the `push` webhook as a `git push` would; a ref outside refs/heads (refs/atelier/held/…) sends
 * nothing, as on GitHub, where no workflow starts for it.
 */

function renderRef(ctx: RestContext, repo: SimRepo, ref: string, sha: string) {
  const api = `${ctx.core.baseUrl}/repos/${ctx.state.fullName(repo)}`;
  return {
    ref,
    node_id: Buffer.from(`Ref:${repo.id}:${ref}`).toString("base64"),
    url: `${api}/git/${ref}`,
    object: { sha, type: "commit", url: `${api}/git/commits/${sha}` },
  };
}

/** A moved ref: a branch's pull requests follow and its push webhook goes out. */
async function moved(ctx: RestContext, repo: SimRepo, ref: string, before: string, after: string): Promise<void> {
  if (ref.startsWith("refs/heads/")) await branchPushed(ctx.core, repo, ref.slice("refs/heads/".length), before, after, actorId(ctx.state, ctx.caller));
}

const fullRef = (ctx: RestContext): string => `refs/${param(ctx, "ref")}`;

async function getRef(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "contents", level: "read" });
  const ref = fullRef(ctx);
  const sha = await ctx.core.git.refSha(repo.gitDir, ref);
  if (!sha) throw new GitHubApiError(404, "Not Found");
  return { body: renderRef(ctx, repo, ref, sha) };
}

async function createRef(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "contents", level: "write" });
  const body = asObject(ctx.body);
  const ref = stringField(body, "ref", "Reference", true)!;
  const sha = stringField(body, "sha", "Reference", true)!;
  if (!isRefName(ref)) throw validationFailed([], `${ref} is not a valid ref name.`);
  if (!/^[0-9a-f]{40}$/.test(sha) || !(await ctx.core.git.resolve(repo.gitDir, sha))) throw validationFailed([], "Object does not exist");
  if (await ctx.core.git.refSha(repo.gitDir, ref)) throw validationFailed([], "Reference already exists");
  await ctx.core.git.updateRef(repo.gitDir, ref, sha, ZERO_SHA);
  await moved(ctx, repo, ref, ZERO_SHA, sha);
  return { status: 201, body: renderRef(ctx, repo, ref, sha) };
}

async function updateRef(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "contents", level: "write" });
  const ref = fullRef(ctx);
  const body = asObject(ctx.body);
  const sha = stringField(body, "sha", "Reference", true)!;
  const force = body.force === true;
  const before = await ctx.core.git.refSha(repo.gitDir, ref);
  if (!before) throw validationFailed([], "Reference does not exist");
  if (!/^[0-9a-f]{40}$/.test(sha) || !(await ctx.core.git.resolve(repo.gitDir, sha))) throw validationFailed([], "Object does not exist");
  if (!force && !(await ctx.core.git.isAncestor(repo.gitDir, before, sha))) throw validationFailed([], "Update is not a fast forward");
  await ctx.core.git.updateRef(repo.gitDir, ref, sha, before);
  await moved(ctx, repo, ref, before, sha);
  return { body: renderRef(ctx, repo, ref, sha) };
}

async function deleteRef(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "contents", level: "write" });
  const ref = fullRef(ctx);
  const before = await ctx.core.git.refSha(repo.gitDir, ref);
  if (!before) throw validationFailed([], "Reference does not exist");
  await ctx.core.git.updateRef(repo.gitDir, ref, ZERO_SHA, before);
  await moved(ctx, repo, ref, before, ZERO_SHA);
  return { status: 204 };
}

export const gitRefRoutes = repoScoped({
  "/git/ref/{ref+}": { GET: getRef },
  "/git/refs": { POST: createRef },
  "/git/refs/{ref+}": { PATCH: updateRef, DELETE: deleteRef },
});
