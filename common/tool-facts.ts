/**
 * The facts the permission engine (common/permissions.ts `decidePermission`) needs about a call,
 * from the tool's own spec: the workflow's gate and the local phase of a model call (which runs
 * the reads an answer asks for, common/tool-prefetch.ts) decide with the same ones.
 */
import type { ToolFacts } from './permissions';
import { getToolSpec } from './tool-specs';

/** Read-only and valid-input facts of a call, from the tool's own spec (the Bash classifier for Bash). */
export function toolFacts(block: { name: string; input: unknown }): ToolFacts {
  const spec = getToolSpec(block.name);
  if (!spec) return { readOnly: false, validInput: false };
  const parsed = spec.inputSchema.safeParse(block.input);
  if (!parsed.success) return { readOnly: false, validInput: false };
  // An Agent's own tool calls (and those a SendMessage leads to) are checked in the subagent, under the same mode and rules.
  if (block.name === 'Agent' || block.name === 'SendMessage') return { readOnly: true, validInput: true };
  try {
    return { readOnly: spec.isReadOnly(parsed.data), validInput: true };
  } catch {
    return { readOnly: false, validInput: true };
  }
}
