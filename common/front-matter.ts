/**
 * The `---` front matter of Claude Code's Markdown files (`.claude/agents/*.md`,
 * `.claude/commands/*.md`): `key: value` lines and `key:` followed by `- item` lists, values
 * unquoted. A small reader on purpose — these files hold a handful of flat fields. Pure.
 */

/** Fields of a front matter block (the text between the `---` lines). */
export function parseFrontMatterFields(frontMatter: string): Map<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  let listKey: string | undefined;
  for (const line of frontMatter.split(/\r?\n/)) {
    const item = /^\s+-\s+(.*)$/.exec(line);
    if (item && listKey) {
      const list = fields.get(listKey);
      fields.set(listKey, [...(Array.isArray(list) ? list : []), unquote(item[1])]);
      continue;
    }
    const pair = /^([A-Za-z_-]+):\s*(.*)$/.exec(line);
    if (!pair) continue;
    listKey = pair[2].trim() === '' ? pair[1] : undefined;
    fields.set(pair[1], pair[2].trim() === '' ? [] : unquote(pair[2].trim()));
  }
  return fields;
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return /^(['"]).*\1$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}
