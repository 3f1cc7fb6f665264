/**
 * The `---` front matter of Claude Code's Markdown files (`.claude/agents/*.md`,
 * `.claude/commands/*.md`), parsed as YAML with the `yaml` library (style §21: the hand reader
 * turned `description: |` into "|", `tools: [Read, Grep]` into "[Read" and "Grep]", and kept
 * `# comments` in values). Activity side only: the workflow bundle never parses YAML; the parsed
 * definitions reach it in the session context.
 */
import { parseDocument } from 'yaml';

/** A Markdown file split into its front matter (parsed) and body. */
export interface FrontMatterFile {
  fields: Record<string, unknown>;
  body: string;
}

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/**
 * Splits `text` into front matter and body. Undefined when the file has no front matter; throws
 * (with `source` in the message) when it is opened and never closed, or is not a YAML mapping.
 */
export function readFrontMatter(text: string, source: string): FrontMatterFile | undefined {
  const opening = OPENING.exec(text);
  if (!opening) return undefined;
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) throw new Error(`${source}: the front matter opened with --- is never closed`);
  const yamlText = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, '');
  let document = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    // Claude Code's documented `argument-hint: [pr-number] [priority]` is not YAML (a flow list
    // followed by text). Like Claude Code, retry with such plain values quoted; else the error.
    const retried = parseDocument(quotePlainValues(yamlText), { prettyErrors: false, uniqueKeys: true });
    if (retried.errors.length > 0) {
      throw new Error(`${source}: the front matter is not valid YAML: ${document.errors[0].message.split('\n')[0]}`);
    }
    document = retried;
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  if (value === null || value === undefined) return { fields: {}, body };
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${source}: the front matter must be YAML \`key: value\` pairs`);
  return { fields: value as Record<string, unknown>, body };
}

/** `key: value` lines whose unquoted value starts with a YAML indicator (`[`, `{`, `*`, …): the value quoted. */
function quotePlainValues(yamlText: string): string {
  return yamlText
    .split(/\r?\n/)
    .map((line) => {
      const pair = /^([A-Za-z0-9_-]+):[ \t]+(.*?)[ \t]*$/.exec(line);
      if (!pair || !/^[[{*&!%@`]/.test(pair[2])) return line;
      return `${pair[1]}: ${JSON.stringify(pair[2])}`;
    })
    .join('\n');
}

/** A field as text: strings as they are, numbers and booleans written out; anything else undefined. */
export function textField(fields: Record<string, unknown>, key: string): string | undefined {
  const value = fields[key];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // `argument-hint: [message]` is a YAML flow list of one item: written back as it was meant.
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) return value.map((item) => `[${item}]`).join(' ');
  return undefined;
}

/** A list field: a YAML list, or a comma-separated string (`tools: Read, Grep`). Undefined when absent or empty. */
export function listField(fields: Record<string, unknown>, key: string): string[] | undefined {
  const value = fields[key];
  const items = Array.isArray(value)
    ? value.filter((item) => typeof item === 'string' || typeof item === 'number').map((item) => String(item).trim())
    : typeof value === 'string'
      ? value.split(',').map((item) => item.trim())
      : [];
  const kept = items.filter((item) => item !== '');
  return kept.length > 0 ? kept : undefined;
}
