import type { ServerResponse } from "node:http";
import type { SimCore } from "../core";
import { escapeHtml, page } from "../html";
import { sendHtml } from "../http-util";
import { renderEditorPage } from "./file-editor-page";
import { renderItemPage } from "./item-page";

/** `/_sim/<owner>/<repo>/items/<n>`: an Item's page. */
export const ITEM_PAGE = /^\/_sim\/([^/]+)\/([^/]+)\/items\/(\d+)$/;

function notFound(res: ServerResponse, what: string): void {
  sendHtml(res, 404, page("Not in the simulator", `<p>${escapeHtml(what)}</p><p><a href="/_sim">The sandbox's GitHub</a></p>`));
}

/** The sandbox's web pages besides the control page: an Item, a file's editor. */
export async function sendWebPage(core: SimCore, res: ServerResponse, url: URL): Promise<void> {
  const message = url.searchParams.get("message");
  const item = ITEM_PAGE.exec(url.pathname);
  if (item) {
    const repo = core.state.findRepo(decodeURIComponent(item[1] ?? ""), decodeURIComponent(item[2] ?? ""));
    const found = repo && core.state.findItem(repo, Number(item[3]));
    if (!repo || !found) return notFound(res, `No issue or pull request #${item[3]} in ${item[1]}/${item[2]}.`);
    return sendHtml(res, 200, await renderItemPage(core, repo, found, message));
  }
  const fullName = url.searchParams.get("repo") ?? "";
  const [owner = "", name = ""] = fullName.split("/");
  const repo = core.state.findRepo(owner, name);
  if (!repo) return notFound(res, `No repository ${fullName} in the simulator.`);
  const branch = url.searchParams.get("branch") || repo.defaultBranch;
  sendHtml(res, 200, await renderEditorPage(core, repo, branch, (url.searchParams.get("path") ?? "").replace(/^\/+/, ""), message));
}
