import type { SimCore } from "./core";
import { escapeHtml as e, page } from "./html";
import type { SimIssue, SimRepo } from "./model";
import { labelsOf } from "./state/labels";
import { editorPath, form, itemPath } from "./web/form";
import { CONFIG_FILE } from "./web/file-editor-page";

function itemRow(core: SimCore, repo: SimRepo, item: SimIssue): string {
  const full = core.state.fullName(repo);
  const ref = { repo: full, number: item.number };
  const labels = labelsOf(repo, item)
    .map((l) => `<span class="label" style="background:#${e(l.color)}">${e(l.name)} ${form("removeLabel", "", "×", { ...ref, label: l.name })}</span>`)
    .join("");
  const options = [...repo.labels.values()].map((l) => `<option value="${e(l.name)}">`).join("");
  const pull = item.pull;
  const kind = pull ? `PR ${e(pull.headRef)}→${e(pull.baseRef)}${pull.draft ? " (draft)" : ""}${pull.merged ? " merged" : ""} mergeable: ${String(pull.mergeable)}` : "issue";
  const toggle = item.state === "open" ? form("editIssue", "", "Close", { ...ref, state: "closed" }) : pull?.merged ? "" : form("editIssue", "", "Reopen", { ...ref, state: "open" });
  const pullActions = pull && item.state === "open"
    ? form("pushCommit", "", "Push a commit", { repo: full, branch: pull.headRef }) +
      form("setDraft", "", pull.draft ? "Ready for review" : "Convert to draft", { ...ref, draft: pull.draft ? "false" : "true" }) +
      form("setMergeable", `<select name="mergeable"><option>true</option><option>false</option><option>null</option></select>`, "Set mergeable", ref) +
      form("mergePullRequest", "", "Merge", ref)
    : "";
  return `<tr id="${e(full)}-${item.number}"><td><a href="${e(itemPath(full, item.number))}">#${item.number}</a></td><td>${e(item.title)}<div class="muted">${kind} · ${item.state}</div></td>
<td>${labels}${form("addLabels", `<input name="labels" list="labels-${repo.id}" placeholder="label" size="12">`, "Label", ref)}<datalist id="labels-${repo.id}">${options}</datalist></td>
<td>${form("comment", `<input name="body" placeholder="comment" size="18">`, "Comment", ref)} ${toggle} ${pullActions}</td></tr>`;
}

function repoSection(core: SimCore, repo: SimRepo): string {
  const full = core.state.fullName(repo);
  const items = core.state.itemsOf(repo).sort((a, b) => b.number - a.number).map((item) => itemRow(core, repo, item)).join("");
  const runs = [...core.state.checkRuns.values()]
    .filter((r) => r.repoId === repo.id)
    .slice(-10)
    .map((r) => {
      const actions = r.actions.map((a) => form("clickCheckRunAction", "", a.label, { checkRunId: r.id, identifier: a.identifier })).join("");
      return `<li>${e(r.name)} @ ${e(r.headSha.slice(0, 7))}: ${e(r.status)} ${e(r.conclusion ?? "")} ${actions} ${form("rerequestCheckRun", "", "Re-run", { checkRunId: r.id })}</li>`;
    })
    .join("");
  return `<h2 id="${e(full)}">${e(full)}</h2>
<p><a href="${e(editorPath(full, repo.defaultBranch, CONFIG_FILE))}">Edit ${CONFIG_FILE}</a> · <a href="${e(editorPath(full, repo.defaultBranch, ""))}">Edit another file</a></p>
${form("createIssue", `<input name="title" placeholder="title" required><input name="body" placeholder="body"><input name="labels" placeholder="labels, comma separated">`, "Open issue", { repo: full })}
${form("openPullRequest", `<input name="head" placeholder="head branch" required><input name="base" placeholder="base (main)"><input name="title" placeholder="title" required><label><input type="checkbox" name="draft"> draft</label>`, "Open pull request", { repo: full })}
${form("pushCommit", `<input name="branch" placeholder="branch" required><input name="file" placeholder="path (optional)"><input name="content" placeholder="content">`, "Push commit", { repo: full })}
<table><tr><th>#</th><th>title</th><th>labels</th><th>act</th></tr>${items}</table>
${runs ? `<h3>Check runs</h3><ul>${runs}</ul>` : ""}`;
}

/** GET /_sim: the sandbox's GitHub, as plain HTML forms. */
export function renderControlPage(core: SimCore, message: string | null): string {
  const { state } = core;
  const users = [...state.accounts.values()].filter((a) => a.type === "User");
  const actAs = form(
    "setDefaultUser",
    `<select name="login">${users.map((u) => `<option${u.login === state.defaultOAuthLogin ? " selected" : ""}>${e(u.login)}</option>`).join("")}</select>`,
    "Act as",
  );
  const deliveries = core.webhooks.log
    .slice(-15)
    .reverse()
    .map((d) => `<li class="delivery-${d.status}">${e(d.event)}.${e(d.action)} → ${e(d.status)} ${d.statusCode ?? ""}${d.redelivery ? " (redelivery)" : ""} <span class="muted">${e(d.id)}</span> ${form("redeliver", "", "Redeliver", { id: d.id })}</li>`)
    .join("");
  const webhooks = `<h2>Webhooks</h2><p>To <code>${e(state.app.webhookUrl ?? "(no URL)")}</code>${core.webhooks.isPaused ? " — paused" : ""}</p>
${form("dropNextWebhook", "", "Lose the next delivery")} ${core.webhooks.isPaused ? form("resumeWebhooks", "", "Resume") : form("pauseWebhooks", "", "Pause")}
<ul>${deliveries}</ul>`;
  const clock = `<h2>Clock</h2><p>${e(new Date(core.clock.now()).toISOString())}</p>${form("advanceClock", `<input name="ms" value="3600000" size="10">`, "Advance (ms)")}`;
  return page(
    "Atelier sandbox — simulated GitHub",
    `${message ? `<p><strong>${e(message)}</strong></p>` : ""}<p>Acting as <strong>${e(state.defaultOAuthLogin ?? "(nobody)")}</strong> ${actAs}</p>
${[...state.repos.values()].map((repo) => repoSection(core, repo)).join("")}${webhooks}${clock}`,
  );
}
