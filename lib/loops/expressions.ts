import { data, Evaluator, ExpressionError, Lexer, Parser, wellKnownFunctions, type Expr } from "@actions/expressions";
import { BadInputError } from "../errors";

export { buildItemContext, buildTickContext, type ItemContext, type TickContext } from "./item-context";

/**
 * Loop expressions in GitHub Actions syntax: `if:` conditions and `${{ }}` prompt templates.
 * Only the names `item`, `repository`, `loop` and `comment` (null but for a comments Loop) exist; anything else is refused when the
 * expression is compiled, that is when the config is read, not when an Item comes by.
 */

export const CONTEXT_NAMES = ["item", "repository", "loop", "comment"] as const;

/** The values an expression reads: plain JS objects (JSON-like: objects, arrays, primitives, null). */
export interface ExpressionContext {
  item: unknown;
  repository: unknown;
  loop: unknown;
  /** the comment a comments Loop answers; absent (null) for every other Loop */
  comment?: unknown;
}

export interface CompiledCondition {
  readonly source: string;
  /** @internal the parsed expression */
  readonly ast: Expr;
}

export type TemplateSegment =
  | { readonly text: string }
  | { readonly source: string; readonly ast: Expr; readonly line: number; readonly column: number };

export interface CompiledTemplate {
  readonly source: string;
  readonly segments: readonly TemplateSegment[];
}

/** An expression that cannot compile; `line`/`column` are 1-based within the source given. */
export class ExpressionSyntaxError extends BadInputError {
  constructor(
    message: string,
    readonly expression: string,
    readonly line: number,
    readonly column: number,
  ) {
    super("config_bad_expression", message, { expression, line, column });
  }
}

/** An expression that compiled but failed while evaluating (e.g. fromJSON of bad JSON). */
export class ExpressionEvaluationError extends BadInputError {
  constructor(
    message: string,
    readonly expression: string,
  ) {
    super("expression_evaluation_failed", message, { expression });
  }
}

/** The functions Actions documents, with its spelling; the parser matches names case-insensitively. */
const FUNCTION_NAMES = ["contains", "startsWith", "endsWith", "format", "join", "toJSON", "fromJSON", "case"]
  .filter((name) => name.toLowerCase() in wellKnownFunctions)
  .map((name) => `${name}()`)
  .join(", ");

/**
 * Compiles an `if:` condition. A condition wrapped whole in `${{ }}` is accepted too, as in
 * Actions. Throws ExpressionSyntaxError (token config_bad_expression) with the position.
 */
export function compileCondition(src: string): CompiledCondition {
  if (src.includes("${{")) {
    const template = compileTemplate(src);
    const exprs = template.segments.filter((s): s is Extract<TemplateSegment, { ast: Expr }> => "ast" in s);
    const onlyText = template.segments.every((s) => "ast" in s || s.text.trim() === "");
    if (exprs.length !== 1 || !onlyText) {
      throw new ExpressionSyntaxError(
        `The condition "${oneLine(src)}" mixes text and \${{ }}: write the condition alone (e.g. contains(item.labels.*.name, 'ready-for-agent')), or wrap all of it in one \${{ }}.`,
        src,
        1,
        1,
      );
    }
    return { source: src, ast: exprs[0]!.ast };
  }
  return { source: src, ast: compileExpression(src) };
}

/** Evaluates a compiled condition; the result follows Actions truthiness (null, false, 0, NaN, "" are false). */
export function evaluateCondition(compiled: CompiledCondition, context: ExpressionContext): boolean {
  return isTruthy(evaluate(compiled.ast, compiled.source, context));
}

/** Compiles a template with `${{ expr }}` segments; throws ExpressionSyntaxError with the position. */
export function compileTemplate(src: string): CompiledTemplate {
  const segments: TemplateSegment[] = [];
  let cursor = 0;
  while (cursor < src.length) {
    const open = src.indexOf("${{", cursor);
    if (open < 0) break;
    if (open > cursor) segments.push({ text: src.slice(cursor, open) });
    const start = open + 3;
    const close = findClose(src, start);
    const at = positionOf(src, open);
    if (close < 0) {
      throw new ExpressionSyntaxError(
        `The \${{ at line ${at.line}, column ${at.column} has no closing }}: close it, or remove it.`,
        src,
        at.line,
        at.column,
      );
    }
    const exprSource = src.slice(start, close);
    const exprAt = positionOf(src, start);
    if (exprSource.trim() === "") {
      throw new ExpressionSyntaxError(
        `The \${{ }} at line ${at.line}, column ${at.column} is empty: put an expression inside, e.g. \${{ item.title }}.`,
        src,
        at.line,
        at.column,
      );
    }
    const ast = compileExpression(exprSource, { base: exprAt, whole: src });
    segments.push({ source: exprSource.trim(), ast, line: at.line, column: at.column });
    cursor = close + 2;
  }
  if (cursor < src.length) segments.push({ text: src.slice(cursor) });
  return { source: src, segments };
}

/** Renders a compiled template: strings as is, null as "", numbers and booleans as Actions prints them, objects and arrays as JSON. */
export function renderCompiledTemplate(template: CompiledTemplate, context: ExpressionContext): string {
  let out = "";
  for (const segment of template.segments) {
    if ("text" in segment) out += segment.text;
    else out += stringify(evaluate(segment.ast, segment.source, context));
  }
  return out;
}

/** Compiles and renders `src`; throws ExpressionSyntaxError or ExpressionEvaluationError. */
export function renderTemplate(src: string, context: ExpressionContext): string {
  return renderCompiledTemplate(compileTemplate(src), context);
}

/** Converts a plain JS value to the expression library's data (undefined and functions become null). */
export function toExpressionData(value: unknown): data.ExpressionData {
  if (value === null || value === undefined) return new data.Null();
  if (typeof value === "string") return new data.StringData(value);
  if (typeof value === "number") return new data.NumberData(value);
  if (typeof value === "bigint") return new data.NumberData(Number(value));
  if (typeof value === "boolean") return new data.BooleanData(value);
  if (value instanceof Date) return new data.StringData(value.toISOString());
  if (Array.isArray(value)) return new data.Array(...value.map(toExpressionData));
  if (typeof value === "object") {
    const dict = new data.Dictionary();
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== undefined) dict.add(key, toExpressionData(v));
    }
    return dict;
  }
  return new data.Null();
}

/** Converts expression data back to plain JS. */
export function fromExpressionData(value: data.ExpressionData): unknown {
  switch (value.kind) {
    case data.Kind.Null:
      return null;
    case data.Kind.String:
    case data.Kind.Number:
    case data.Kind.Boolean:
      return (value as data.StringData | data.NumberData | data.BooleanData).value;
    case data.Kind.Array:
      return (value as data.Array).values().map(fromExpressionData);
    default: {
      const out: Record<string, unknown> = {};
      for (const pair of (value as data.Dictionary).pairs()) out[pair.key] = fromExpressionData(pair.value);
      return out;
    }
  }
}

/** Actions truthiness: null, false, 0, NaN and "" are false; everything else (arrays, objects too) is true. */
export function isTruthy(value: data.ExpressionData): boolean {
  switch (value.kind) {
    case data.Kind.Null:
      return false;
    case data.Kind.Boolean:
      return (value as data.BooleanData).value;
    case data.Kind.Number: {
      const n = (value as data.NumberData).value;
      return !(n === 0 || Number.isNaN(n));
    }
    case data.Kind.String:
      return (value as data.StringData).value.length > 0;
    default:
      return true;
  }
}

// ---------------------------------------------------------------------------------------------

interface Position {
  line: number;
  column: number;
}

function compileExpression(src: string, inTemplate?: { base: Position; whole: string }): Expr {
  const where = (pos: Position) => (inTemplate ? shift(inTemplate.base, pos) : pos);
  const described = (pos: Position) => {
    const p = where(pos);
    return `line ${p.line}, column ${p.column}`;
  };
  const fail = (message: string, pos: Position): never => {
    const p = where(pos);
    throw new ExpressionSyntaxError(message, inTemplate?.whole ?? src, p.line, p.column);
  };
  if (src.trim() === "") {
    return fail(
      "The expression is empty: write a condition such as contains(item.labels.*.name, 'ready-for-agent').",
      { line: 1, column: 1 },
    );
  }
  let tokens;
  try {
    tokens = new Lexer(src).lex().tokens;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /position (\d+)/.exec(message);
    const pos = at ? positionOf(src, Number(at[1]) - 1) : { line: 1, column: 1 };
    const symbol = /Unexpected symbol: '([^']*)'/.exec(message)?.[1];
    if (/ExceededMaxLength/.test(message)) {
      return fail(`The expression is too long: keep it under 21,000 characters.`, pos);
    }
    return fail(
      `The expression "${oneLine(src)}" has an unexpected symbol${symbol ? ` '${symbol}'` : ""} at ${described(pos)}: strings take single quotes ('like this'), and the operators are ==, !=, <, <=, >, >=, &&, || and !.`,
      pos,
    );
  }
  try {
    const ast = new Parser(tokens, [...CONTEXT_NAMES], []).parse();
    if (!ast) {
      return fail("The expression is empty: write a condition such as contains(item.labels.*.name, 'ready-for-agent').", {
        line: 1,
        column: 1,
      });
    }
    return ast;
  } catch (err) {
    if (err instanceof ExpressionSyntaxError) throw err;
    if (!(err instanceof ExpressionError)) throw err;
    const pos = { line: err.pos.line + 1, column: err.pos.column + 1 };
    const token = /: '(.*)'$/s.exec(err.message)?.[1] ?? "";
    const kind = err.message.split(":")[0] ?? "";
    if (kind === "Unrecognized named-value") {
      return fail(
        `Unknown name '${token}' at ${described(pos)} of "${oneLine(src)}": the names you can use are item, repository, loop and comment (e.g. item.title, repository.full_name, comment.body).`,
        pos,
      );
    }
    if (kind === "Unrecognized function") {
      return fail(
        `Unknown function '${token}' at ${described(pos)} of "${oneLine(src)}": the functions you can use are ${FUNCTION_NAMES}.`,
        pos,
      );
    }
    if (/parameters supplied/.test(kind)) {
      return fail(`The function '${token}' at ${described(pos)} is called with the wrong number of arguments (${kind.toLowerCase()}).`, pos);
    }
    if (kind === "Unexpected end of expression") {
      return fail(`The expression "${oneLine(src)}" ends too early after '${token}': complete it.`, pos);
    }
    return fail(
      `The expression "${oneLine(src)}" is not valid: ${kind.toLowerCase() || "syntax error"}${token ? ` '${token}'` : ""} at ${described(pos)}.`,
      pos,
    );
  }
}

function evaluate(ast: Expr, source: string, context: ExpressionContext): data.ExpressionData {
  const dict = new data.Dictionary();
  for (const name of CONTEXT_NAMES) dict.add(name, toExpressionData(context[name] ?? null));
  try {
    return new Evaluator(ast, dict).evaluate();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ExpressionEvaluationError(`The expression "${oneLine(source)}" failed while evaluating: ${reason}`, source);
  }
}

function stringify(value: data.ExpressionData): string {
  switch (value.kind) {
    case data.Kind.Null:
      return "";
    case data.Kind.String:
      return (value as data.StringData).value;
    case data.Kind.Number:
    case data.Kind.Boolean:
      return value.coerceString();
    default:
      return JSON.stringify(fromExpressionData(value), null, 2);
  }
}

/** The index of the `}}` that closes an expression starting at `from`, skipping string literals. */
function findClose(src: string, from: number): number {
  let inString = false;
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    if (inString) {
      if (c === "'") {
        if (src[i + 1] === "'") i++;
        else inString = false;
      }
    } else if (c === "'") {
      inString = true;
    } else if (c === "}" && src[i + 1] === "}") {
      return i;
    }
  }
  return -1;
}

/** 1-based line and column of `index` in `src`. */
function positionOf(src: string, index: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index && i < src.length; i++) {
    if (src[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/** A position inside an expression that starts at `base`, as a position in the enclosing text. */
function shift(base: Position, pos: Position): Position {
  if (pos.line === 1) return { line: base.line, column: base.column + pos.column - 1 };
  return { line: base.line + pos.line - 1, column: pos.column };
}

function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}
