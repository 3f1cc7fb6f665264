/**
 * Parses Claude Code's `.claude/agents/*.md` files (YAML front matter, activities/front-matter.ts).
 * Worker side: the definitions reach the workflow in the session context.
 */
import type { AgentDefinition } from '../common/agents';
import { listField, readFrontMatter, textField } from './front-matter';

/**
 * Parses a `.claude/agents/*.md` file: `---` front matter with `name`, `description`, `tools`
 * (comma-separated or a YAML list) and `model`, then the system prompt. Throws with a clear
 * message when the front matter is missing, is not valid YAML, or lacks name/description.
 */
export function parseAgentFile(text: string, source: string): AgentDefinition {
  const file = readFrontMatter(text, source);
  if (!file) throw new Error(`${source}: an agent file starts with front matter between --- lines (name, description, tools, model)`);
  const name = textField(file.fields, 'name')?.trim();
  const description = textField(file.fields, 'description')?.trim();
  if (!name) throw new Error(`${source}: the front matter needs a name`);
  if (!description) throw new Error(`${source}: the front matter needs a description`);
  const model = textField(file.fields, 'model')?.trim();
  const body = file.body.trim();
  return {
    name,
    description,
    tools: listField(file.fields, 'tools'),
    model: model && model !== 'inherit' ? model : undefined,
    systemPrompt: body || undefined,
    source,
  };
}
