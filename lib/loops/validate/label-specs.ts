import { LABEL_COLOR, LABEL_DESCRIPTION_MAX, LABEL_KEYS, LABEL_NAME_MAX, type LabelSpec } from "../config-schema";
import { isRecord, suggest, type Path, type Report } from "./shared";

/** `labels:`: the labels the App creates in the repository, each with its name, color and description. */
export function validateLabels(raw: unknown, report: Report): LabelSpec[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    report(null, "config_invalid", ["labels"], "labels: must be a list, e.g. labels: [{ name: ready-for-agent, color: 0e8a16 }].");
    return [];
  }
  const labels: LabelSpec[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, i) => {
    const path: Path = ["labels", i];
    if (!isRecord(entry)) {
      report(null, "config_invalid", path, `Label ${i + 1} must be a map like { name: ready-for-agent, color: 0e8a16 }.`);
      return;
    }
    let ok = true;
    const label = typeof entry.name === "string" ? `"${entry.name}"` : `${i + 1}`;
    for (const key of Object.keys(entry)) {
      if (!LABEL_KEYS.includes(key)) {
        ok = false;
        report(null, "config_unknown_key", [...path, key], `Label ${label} has an unknown key "${key}"${suggest(key, LABEL_KEYS)}: the keys are name, color and description.`);
      }
    }
    const name = entry.name;
    if (typeof name !== "string" || name.trim() === "" || name.length > LABEL_NAME_MAX) {
      ok = false;
      report(null, "config_invalid", [...path, "name"], `Label ${label} needs a name: of 1 to ${LABEL_NAME_MAX} characters.`);
    } else if (seen.has(name.toLowerCase())) {
      ok = false;
      report(null, "config_invalid", [...path, "name"], `The label "${name}" is listed twice (GitHub label names ignore case): keep one.`);
    }
    const color = typeof entry.color === "number" ? colorFromNumber(entry.color) : entry.color;
    if (typeof color !== "string" || !LABEL_COLOR.test(color)) {
      ok = false;
      const hint = typeof color === "string" && color.startsWith("#") ? ` (write it without "#": ${color.slice(1)})` : "";
      report(null, "config_invalid", [...path, "color"], `Label ${label} needs a color: of six hex digits, e.g. 0e8a16${hint}.`);
    }
    const description = entry.description;
    if (description !== undefined && description !== null) {
      if (typeof description !== "string" || description.length > LABEL_DESCRIPTION_MAX) {
        ok = false;
        report(null, "config_invalid", [...path, "description"], `Label ${label}'s description: must be text of at most ${LABEL_DESCRIPTION_MAX} characters.`);
      }
    }
    if (typeof name === "string") seen.add(name.toLowerCase());
    if (ok) {
      labels.push({
        name: name as string,
        color: (color as string).toLowerCase(),
        description: typeof description === "string" ? description : null,
      });
    }
  });
  return labels;
}

/** YAML reads a color of digits only as a number; 1122 was written 001122. */
function colorFromNumber(n: number): string | number {
  return Number.isInteger(n) && n >= 0 && n <= 999_999 ? String(n).padStart(6, "0") : n;
}

