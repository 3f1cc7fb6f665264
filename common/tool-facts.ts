/**
 * The facts the permission engine (common/permissions.ts `decidePermission`) needs about a call,
 * from the tool's own spec: the workflow's gate and the local phase of a model call (which runs
 * the reads an answer asks for, common/tool-prefetch.ts) decide with the same ones.
 */
import type { CallFacts } from './permission-facts';
import type { ToolFacts } from './permissions';
import { getToolSpec } from './tool-specs';

/**
 * Read-only and valid-input facts of a call, from the tool's own spec — on the facts gathered where
 * it acts when given (Bash is read-only only on its parsed command's facts), which come along.
 */
export function toolFacts(block: { name: string; input: unknown }, gathered?: CallFacts): ToolFacts {
  const spec = getToolSpec(block.name);
  if (!spec) return { readOnly: false, validInput: false };
  const parsed = spec.inputSchema.safeParse(block.input);
  if (!parsed.success) return { readOnly: false, validInput: false };
  const known = gathered ? { gathered } : {};
  // An Agent's own tool calls (and those a SendMessage leads to) are checked in the subagent, under the same mode and rules.
  if (block.name === 'Agent' || block.name === 'SendMessage') return { readOnly: true, validInput: true, ...known };
  try {
    return { readOnly: spec.isReadOnly(parsed.data, gathered), validInput: true, ...known };
  } catch {
    return { readOnly: false, validInput: true, ...known };
  }
}
