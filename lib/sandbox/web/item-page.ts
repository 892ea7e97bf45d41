import { isoSeconds } from "../sim-clock";
import type { SimCore } from "../core";
import { escapeHtml as e, page } from "../html";
import type { SimCheckRun, SimIssue, SimRepo } from "../model";
import { labelsOf } from "../state/labels";
import { form, itemPath } from "./form";
import { pullDiff } from "./git-reads";

function when(ms: number): string {
  return `<time datetime="${isoSeconds(ms)}">${isoSeconds(ms).replace("T", " ").replace("Z", " UTC")}</time>`;
}

function checkRunRow(run: SimCheckRun, back: string): string {
  const actions = run.actions.map((a) => form("clickCheckRunAction", "", a.label, { checkRunId: run.id, identifier: a.identifier }, back)).join("");
  const output = [run.output.title ? `<strong>${e(run.output.title)}</strong>` : "", run.output.summary ? `<pre class="text">${e(run.output.summary)}</pre>` : ""].join("");
  const details = run.detailsUrl ? ` <a href="${e(run.detailsUrl)}">Details</a>` : "";
  return `<li class="check-run" data-check-run="${run.id}"><strong>${e(run.name)}</strong> <span class="check-status">${e(run.status)}</span> <span class="check-conclusion">${e(run.conclusion ?? "")}</span> <span class="muted">@ ${e(run.headSha.slice(0, 7))}</span>${details}
<div>${output}</div>${actions} ${form("rerequestCheckRun", "", "Re-run", { checkRunId: run.id }, back)}</li>`;
}

async function diffSection(core: SimCore, repo: SimRepo, item: SimIssue): Promise<string> {
  const diff = await pullDiff(core, repo, item);
  if (diff.files.length === 0) return `<h2>Files changed</h2><p class="muted">No change against the base.</p>`;
  const rows = diff.files
    .map((f) => `<tr><td><code>${e(f.path)}</code></td><td class="added">${f.additions === null ? "binary" : `+${f.additions}`}</td><td class="deleted">${f.deletions === null ? "" : `−${f.deletions}`}</td></tr>`)
    .join("");
  return `<h2>Files changed (${diff.files.length})</h2><table class="files"><tr><th>file</th><th>added</th><th>deleted</th></tr>${rows}</table>
<details open><summary>Diff</summary><pre class="diff">${e(diff.patch)}${diff.truncated ? "\n… (cut here)" : ""}</pre></details>`;
}

/**
 * GET /_sim/<owner>/<repo>/items/<n>: an issue or pull request as a person sees it on GitHub —
 * its body, labels, comments (Atelier's tracking comment among them), and for a pull request
 * its check runs and its diff from git — with the buttons that act on it.
 */
export async function renderItemPage(core: SimCore, repo: SimRepo, item: SimIssue, message: string | null): Promise<string> {
  const { state } = core;
  const full = state.fullName(repo);
  const back = itemPath(full, item.number);
  const ref = { repo: full, number: item.number };
  const pull = item.pull;
  const author = state.account(item.authorId).login;
  const labels = labelsOf(repo, item)
    .map((l) => `<span class="label" style="background:#${e(l.color)}">${e(l.name)} ${form("removeLabel", "", "×", { ...ref, label: l.name }, back)}</span>`)
    .join("");
  const options = [...repo.labels.values()].map((l) => `<option value="${e(l.name)}">`).join("");
  const kind = pull
    ? `Pull request <code>${e(pull.headRef)}</code> → <code>${e(pull.baseRef)}</code>${pull.draft ? " · draft" : ""}${pull.merged ? " · merged" : ` · mergeable: ${String(pull.mergeable)}`}`
    : "Issue";
  const toggle = item.state === "open" ? form("editIssue", "", "Close", { ...ref, state: "closed" }, back) : pull?.merged ? "" : form("editIssue", "", "Reopen", { ...ref, state: "open" }, back);
  const merge = pull && item.state === "open" ? form("mergePullRequest", "", "Merge", ref, back) : "";
  const comments = state
    .commentsOf(repo, item.number)
    .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
    .map((c) => {
      const who = state.account(c.authorId);
      return `<li class="comment${who.type === "Bot" ? " bot" : ""}" id="comment-${c.id}"><div class="muted"><strong>${e(who.login)}</strong>${who.type === "Bot" ? " (App)" : ""} · ${when(c.createdAt)}${c.updatedAt !== c.createdAt ? " · edited" : ""}</div><pre class="text">${e(c.body)}</pre></li>`;
    })
    .join("");
  const runs = pull ? [...state.checkRuns.values()].filter((r) => r.repoId === repo.id && r.headSha === pull.headSha).sort((a, b) => a.id - b.id) : [];
  const body = `<p><a href="/_sim#${e(full)}">← ${e(full)}</a></p>
${message ? `<p role="status"><strong>${e(message)}</strong></p>` : ""}
<p>${kind} · <strong>${item.state}</strong> · opened by ${e(author)} · ${when(item.createdAt)}</p>
<p>${labels}${form("addLabels", `<label>Label <input name="labels" list="labels-${repo.id}" size="14"></label>`, "Add", ref, back)}<datalist id="labels-${repo.id}">${options}</datalist> ${toggle} ${merge}</p>
<pre class="text">${e(item.body ?? "")}</pre>
${pull ? `<h2>Checks</h2>${runs.length ? `<ul class="check-runs">${runs.map((r) => checkRunRow(r, back)).join("")}</ul>` : `<p class="muted">No check run on ${e(pull.headSha.slice(0, 7))}.</p>`}` : ""}
<h2>Comments (${comments ? state.commentsOf(repo, item.number).length : 0})</h2>
<ul class="comments">${comments}</ul>
${form("comment", `<label>Comment<br><textarea name="body" rows="4" cols="70" required></textarea></label><br>`, "Comment", ref, back)}
${pull ? await diffSection(core, repo, item) : ""}`;
  return page(`${full} #${item.number}: ${item.title}`, body);
}
