import type { SimCore } from "../core";
import { escapeHtml as e, page } from "../html";
import type { SimRepo } from "../model";
import { editorPath, form } from "./form";
import { fileOn, filesOn } from "./git-reads";

export const CONFIG_FILE = ".github/atelier.yml";

/**
 * GET /_sim/edit?repo=&branch=&path=: a repository file in a multi-line editor (a textarea, as
 * YAML needs); saving commits it to the branch — a real commit, so GitHub's `push` webhook goes
 * out. Without a path: the branch's files, to pick one or name a new one.
 */
export async function renderEditorPage(core: SimCore, repo: SimRepo, branch: string, path: string, message: string | null): Promise<string> {
  const full = core.state.fullName(repo);
  const status = message ? `<p role="status"><strong>${e(message)}</strong></p>` : "";
  const up = `<p><a href="/_sim#${e(full)}">← ${e(full)}</a> · branch <code>${e(branch)}</code></p>`;
  if (!path) {
    const files = (await filesOn(core, repo, branch)).map((f) => `<li><a href="${e(editorPath(full, branch, f))}">${e(f)}</a></li>`).join("");
    const pick = `<form method="get" action="/_sim/edit"><input type="hidden" name="repo" value="${e(full)}"><input type="hidden" name="branch" value="${e(branch)}"><label>New or existing file <input name="path" required size="40"></label><button>Edit</button></form>`;
    return page(`${full}: files on ${branch}`, `${up}${status}${pick}<ul>${files}</ul>`);
  }
  const content = await fileOn(core, repo, branch, path);
  const back = editorPath(full, branch, path);
  const fields = `<label for="content">${e(path)}${content === null ? " (a new file)" : ""}</label><br>
<textarea id="content" name="content" rows="24" cols="90" spellcheck="false">${e(content ?? "")}</textarea><br>
<label>Commit message <input name="message" size="50" value="${e(content === null ? `Create ${path}` : `Update ${path}`)}"></label> `;
  return page(`${full}: ${path}`, `${up}${status}${form("pushCommit", fields, "Commit", { repo: full, branch, file: path }, back)}`);
}
