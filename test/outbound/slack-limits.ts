/**
 * What Slack refuses in an incoming webhook's message, as Slack documents it (docs.slack.dev,
 * Block Kit reference: blocks, block elements, composition objects), written here apart from
 * Atelier's own builder so a test receiver can judge a message the way Slack would. Returns the
 * problems found; an empty list is a message Slack takes.
 */
const LIMITS = {
  blocks: 50,
  blockId: 255,
  header: 150,
  sectionText: 3000,
  sectionFields: 10,
  sectionField: 2000,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonUrl: 3000,
  actionId: 255,
  buttonValue: 2000,
} as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function textProblems(where: string, t: unknown, max: number, kinds: string[]): string[] {
  if (!isObj(t) || !kinds.includes(String(t.type)) || typeof t.text !== "string") return [`${where}: not a ${kinds.join("/")} text object`];
  if (t.text.length === 0) return [`${where}: empty text`];
  return t.text.length > max ? [`${where}: ${t.text.length} characters, over ${max}`] : [];
}

function buttonProblems(where: string, b: Obj): string[] {
  const out = textProblems(`${where}.text`, b.text, LIMITS.buttonText, ["plain_text"]);
  if (typeof b.action_id === "string" && b.action_id.length > LIMITS.actionId) out.push(`${where}.action_id too long`);
  if (b.url !== undefined && (typeof b.url !== "string" || b.url.length > LIMITS.buttonUrl || !/^https?:\/\//.test(b.url))) out.push(`${where}.url invalid`);
  if (typeof b.value === "string" && b.value.length > LIMITS.buttonValue) out.push(`${where}.value too long`);
  if (b.style !== undefined && b.style !== "primary" && b.style !== "danger") out.push(`${where}.style invalid`);
  return out;
}

export function slackMessageProblems(message: unknown): string[] {
  if (!isObj(message)) return ["the message is not an object"];
  const out: string[] = [];
  if (message.text !== undefined && typeof message.text !== "string") out.push("text is not a string");
  const blocks = message.blocks;
  if (!Array.isArray(blocks) || blocks.length === 0) return [...out, "no blocks"];
  if (blocks.length > LIMITS.blocks) out.push(`${blocks.length} blocks, over ${LIMITS.blocks}`);
  const ids = new Set<string>();
  blocks.forEach((b, i) => {
    const where = `blocks[${i}]`;
    if (!isObj(b)) return void out.push(`${where}: not an object`);
    if (typeof b.block_id === "string") {
      if (b.block_id.length > LIMITS.blockId || ids.has(b.block_id)) out.push(`${where}.block_id too long or repeated`);
      ids.add(b.block_id);
    }
    switch (b.type) {
      case "header":
        out.push(...textProblems(`${where}.text`, b.text, LIMITS.header, ["plain_text"]));
        break;
      case "section":
        if (b.text === undefined && b.fields === undefined) out.push(`${where}: a section needs text or fields`);
        if (b.text !== undefined) out.push(...textProblems(`${where}.text`, b.text, LIMITS.sectionText, ["plain_text", "mrkdwn"]));
        if (Array.isArray(b.fields)) {
          if (b.fields.length > LIMITS.sectionFields) out.push(`${where}: over ${LIMITS.sectionFields} fields`);
          b.fields.forEach((f, j) => out.push(...textProblems(`${where}.fields[${j}]`, f, LIMITS.sectionField, ["plain_text", "mrkdwn"])));
        }
        break;
      case "context":
        if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > LIMITS.contextElements) out.push(`${where}: 1 to ${LIMITS.contextElements} elements`);
        else b.elements.forEach((e, j) => out.push(...textProblems(`${where}.elements[${j}]`, e, LIMITS.sectionText, ["plain_text", "mrkdwn"])));
        break;
      case "actions":
        if (!Array.isArray(b.elements) || b.elements.length === 0 || b.elements.length > LIMITS.actionsElements) out.push(`${where}: 1 to ${LIMITS.actionsElements} elements`);
        else b.elements.forEach((e, j) => (isObj(e) && e.type === "button" ? out.push(...buttonProblems(`${where}.elements[${j}]`, e)) : out.push(`${where}.elements[${j}]: not a button`)));
        break;
      case "divider":
        break;
      default:
        out.push(`${where}: a block of type ${String(b.type)} this receiver does not expect`);
    }
  });
  return out;
}
