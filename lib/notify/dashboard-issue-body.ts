import type { Need } from "../dashboard/needs-you";

/**
 * The dashboard issue's body (ADR 0088): what waits on people in one repository, one checkbox
 * per entry — approve a Run, retry a failed one, reset an Item's cycle budget, read the config
 * again — each line marked with a hidden `<!-- atelier:<action>:<id> -->`. A tick is a line the
 * App wrote unticked that comes back ticked. Every text from GitHub or an agent is put on one
 * line, its HTML and mentions neutralized, so no title or failure message can forge a line, a
 * marker or a ping.
 */

export const DASHBOARD_ISSUE_TITLE = "Atelier: what needs you";
const HEAD = "<!-- atelier:dashboard-issue -->";

export type TickAction = "approve" | "retry" | "reset_budget" | "check_config";

/** One entry's checkbox: what ticking it does, and on what. */
export interface TickSubject {
  action: TickAction;
  /** a Run id, an Item key, or a repository's full name */
  target: string;
}

const subjectKey = (s: TickSubject): string => `${s.action}:${encodeURIComponent(s.target)}`;
const MARKER = /^\s*[-*] \[([ xX])\] <!-- atelier:(approve|retry|reset_budget|check_config):([A-Za-z0-9%._~!*'()-]+) -->/;

/** Text on one line: no HTML, no comment markers, no mention, at most `max` characters. */
export function inline(text: string, max = 300): string {
  const flat = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@/g, "@\u200b")
    .replace(/([[\]`*_|\\])/g, "\\$1");
  return flat.length > max ? `${flat.slice(0, max - 1).replace(/&[a-z]*$|\\$/, "")}…` : flat;
}

interface Line {
  section: string;
  subject: TickSubject;
  verb: string;
  text: string;
}

function lineOf(n: Need, runUrl: (runId: string) => string): Line | null {
  const what = `${n.number !== null ? `#${n.number} ` : ""}${inline(n.title, 120)}`;
  const detail = n.detail ? ` — ${inline(n.detail)}` : "";
  const run = n.runId ? ` ([the Run](${runUrl(n.runId)}))` : "";
  switch (n.action.kind) {
    case "approve":
      return { section: "Waiting for approval", subject: { action: "approve", target: n.action.runId }, verb: "Approve", text: `${what}${detail}${run}` };
    case "retry_or_resolve":
      return { section: "Failed", subject: { action: "retry", target: n.action.runId }, verb: "Retry", text: `${what}${detail}${run}` };
    case "reset_budget":
      return { section: "Cycle budget used up", subject: { action: "reset_budget", target: n.action.itemKey }, verb: "Reset the budget", text: `${what}${detail}` };
    case "fix_config":
      return { section: "Config errors", subject: { action: "check_config", target: n.repo }, verb: "Read the config again", text: `${inline(n.title, 120)}${detail}` };
    default:
      return null;
  }
}

const SECTIONS = ["Waiting for approval", "Failed", "Cycle budget used up", "Config errors"];

/** The body for these entries of Needs you (the kinds the issue lists; others are left out). */
export function dashboardIssueBody(needs: readonly Need[], runUrl: (runId: string) => string, needsYouUrl: string): string {
  const lines = needs.map((n) => lineOf(n, runUrl)).filter((l): l is Line => l !== null);
  const seen = new Set<string>();
  const out = [
    HEAD,
    "Atelier keeps this issue up to date with what waits on people in this repository. Tick a box to act on it: ticks by people with write access act (as on the dashboard); anyone else's tick is undone. This issue never starts a Loop.",
    "",
  ];
  for (const section of SECTIONS) {
    const mine = lines.filter((l) => l.section === section && !seen.has(subjectKey(l.subject)) && seen.add(subjectKey(l.subject)));
    if (!mine.length) continue;
    out.push(`### ${section}`, "");
    for (const l of mine) out.push(`- [ ] <!-- atelier:${subjectKey(l.subject)} --> **${l.verb}:** ${l.text}`);
    out.push("");
  }
  if (!lines.length) out.push("Nothing waits on people here.", "");
  out.push(`[Needs you](${needsYouUrl}) on Atelier lists the same, with every repository you can see.`);
  return out.join("\n");
}

/** The body of an issue the App closed because `.github/atelier.yml` turned it off: no box left to tick. */
export function closedDashboardIssueBody(needsYouUrl: string): string {
  return [
    HEAD,
    "Atelier closed this issue and no longer keeps it: this repository's `.github/atelier.yml` does not say `dashboard_issue: true` any more. Ticking anything here does nothing. Set `dashboard_issue: true` again and Atelier reopens this issue.",
    "",
    `[Needs you](${needsYouUrl}) on Atelier still lists what waits on people here.`,
  ].join("\n");
}

/** The entries of a body, ticked or not, by their marker. */
function boxes(body: string): Map<string, { ticked: boolean; subject: TickSubject }> {
  const found = new Map<string, { ticked: boolean; subject: TickSubject }>();
  for (const line of body.split(/\r?\n/)) {
    const m = MARKER.exec(line);
    if (!m) continue;
    let target: string;
    try {
      target = decodeURIComponent(m[3]!);
    } catch {
      continue;
    }
    const subject = { action: m[2] as TickAction, target };
    found.set(subjectKey(subject), { ticked: m[1] !== " ", subject });
  }
  return found;
}

/** The ticks: entries the App wrote unticked (in `written`) that are ticked in `edited`. */
export function ticksOf(written: string, edited: string): TickSubject[] {
  const ours = boxes(written);
  const theirs = boxes(edited);
  const ticks: TickSubject[] = [];
  for (const [key, box] of theirs) {
    const mine = ours.get(key);
    if (box.ticked && mine && !mine.ticked) ticks.push(mine.subject);
  }
  return ticks;
}
