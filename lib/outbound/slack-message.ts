import type { ActionsBlock, Button, ContextBlock, HeaderBlock, KnownBlock, SectionBlock } from "@slack/types";
import { NOTICE_TITLES, type NoticePayload } from "./notices";

/**
 * A notice as a Slack message for an incoming webhook: Block Kit, typed with Slack's own
 * published types (`@slack/types`, ADR 0087), cut to Slack's documented limits — a header's
 * text 150 characters, a section's 3000, a button's 75 and its URL 3000, at most 50 blocks —
 * so Slack never refuses it for its size. Every text from GitHub (a title, a login in a reason)
 * is escaped: `<!channel>` or `<https://…|a link>` in an issue title reaches Slack as text.
 */

/** Slack's documented limits this message keeps (docs.slack.dev, Block Kit reference). */
export const SLACK_LIMITS = { blocks: 50, headerText: 150, sectionText: 3000, buttonText: 75, url: 3000, contextElements: 10, fallbackText: 4000 } as const;

export interface SlackMessage {
  /** the notification's text (and what a client without blocks shows) */
  text: string;
  blocks: KnownBlock[];
}

/** Slack's control characters in mrkdwn and plain text: `&`, `<` and `>` (api.slack.com, formatting). */
export const escapeSlack = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Cuts text to `max` characters, marking the cut; an escape is never cut in half. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1).replace(/&[a-z]{0,3}$/, "");
  return `${cut}…`;
}

function button(label: string, url: string, actionId: string, primary = false): Button {
  return {
    type: "button",
    text: { type: "plain_text", text: clip(label, SLACK_LIMITS.buttonText), emoji: false },
    url: url.slice(0, SLACK_LIMITS.url),
    action_id: actionId,
    ...(primary ? { style: "primary" as const } : {}),
  };
}

export function slackMessage(p: NoticePayload): SlackMessage {
  const n = p.notice;
  const where = n.repo ? `${n.repo}${n.number !== null ? `#${n.number}` : ""}` : null;
  const heading = [NOTICE_TITLES[n.kind], where].filter(Boolean).join(" · ");
  const header: HeaderBlock = { type: "header", text: { type: "plain_text", text: clip(heading, SLACK_LIMITS.headerText), emoji: false } };
  const titleLine = n.title ? `*${escapeSlack(n.title)}*\n` : "";
  const section: SectionBlock = { type: "section", text: { type: "mrkdwn", text: clip(`${titleLine}${escapeSlack(n.reason)}`, SLACK_LIMITS.sectionText) } };
  const context: ContextBlock = {
    type: "context",
    elements: [{ type: "mrkdwn", text: clip([n.loop ? `Loop ${escapeSlack(n.loop)}` : null, where ? escapeSlack(where) : null, "Atelier"].filter(Boolean).join(" · "), SLACK_LIMITS.sectionText) }],
  };
  const buttons: Button[] = [];
  if (n.links.run) buttons.push(button("Open the Run", n.links.run, "atelier_open_run"));
  if (n.links.approve) buttons.push(button("Approve", n.links.approve, "atelier_approve", true));
  if (!buttons.length) buttons.push(button("Open Needs you", n.links.needs_you, "atelier_needs_you"));
  const actions: ActionsBlock = { type: "actions", elements: buttons };
  const blocks: KnownBlock[] = [header, section, context, actions];
  return { text: clip(escapeSlack(`${heading}: ${n.title ? `${n.title} — ` : ""}${n.reason}`), SLACK_LIMITS.fallbackText), blocks: blocks.slice(0, SLACK_LIMITS.blocks) };
}
