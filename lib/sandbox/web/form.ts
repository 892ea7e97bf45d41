import { escapeHtml as e } from "../html";

/**
 * A form of the sandbox's pages: posts to `/_sim/form/<method>` (the control method of that
 * name), then comes back to `back` (default the control page) with what happened.
 */
export function form(method: string, fields: string, button: string, hidden: Record<string, string | number> = {}, back?: string): string {
  const inputs = Object.entries({ ...hidden, ...(back ? { _back: back } : {}) })
    .map(([k, v]) => `<input type="hidden" name="${e(k)}" value="${e(String(v))}">`)
    .join("");
  return `<form method="post" action="/_sim/form/${method}">${inputs}${fields}<button>${e(button)}</button></form>`;
}

/** The page of an Item, and of a file's editor. */
export const itemPath = (fullName: string, number: number): string => `/_sim/${fullName}/items/${number}`;
export const editorPath = (fullName: string, branch: string, path: string): string =>
  `/_sim/edit?${new URLSearchParams({ repo: fullName, branch, path }).toString()}`;
