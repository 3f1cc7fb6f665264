/**
 * Tool execution on the activity side (seed §2.4 tool `call()`). "Tool failures are data": an unknown
 * tool, invalid input or a failing tool becomes `{ isError: true, content }` the model can act on.
 * Only cancellation throws (the AbortSignal's reason), which the activity turns into Temporal
 * cancellation.
 */
import type { z } from 'zod';
import { TOOL_NAMES, TOOL_SPECS, getToolSpec } from '../../common/tool-specs';
import type { ToolSpec } from '../../common/tool-spec';
import { bashToolSpec } from '../../common/tools/bash';
import { editToolSpec } from '../../common/tools/edit';
import { globToolSpec } from '../../common/tools/glob';
import { grepToolSpec } from '../../common/tools/grep';
import { readToolSpec } from '../../common/tools/read';
import { writeToolSpec } from '../../common/tools/write';
import { webFetchToolSpec } from '../../common/tools/web-fetch';
import { executeBash } from './bash';
import { executeEdit } from './edit';
import { executeFileEdit } from './file-edit';
import { executeGlob } from './glob';
import { executeGrep } from './grep';
import { executeRead } from './read';
import { executeWrite } from './write';
import { executeWebFetch } from './web-fetch';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

export type { ToolExecutionContext, ToolExecutionResult } from './types';

type ToolImplementation = (input: unknown, context: ToolExecutionContext) => Promise<ToolExecutionResult>;

/** Pairs a spec with its implementation; the implementation only ever sees schema-valid input. */
function implement<Schema extends z.ZodType>(
  spec: ToolSpec<Schema>,
  run: (input: z.output<Schema>, context: ToolExecutionContext) => Promise<ToolExecutionResult>,
): ToolImplementation {
  return async (input, context) => {
    const parsed = spec.inputSchema.safeParse(input);
    if (!parsed.success) {
      return {
        isError: true,
        content: `InputValidationError: ${spec.name} failed because: ${formatValidationIssues(parsed.error.issues)}`,
      };
    }
    return run(parsed.data, context);
  };
}

/**
 * The tools that run here: those with an implementation file of their own, and every tool whose
 * spec edits a file by a pure function of its text (`editFile`: activities/tools/file-edit.ts),
 * which needs none. The other specs are answered in the workflow (workflows/background/, subagents).
 */
const IMPLEMENTATIONS: Readonly<Record<string, ToolImplementation>> = {
  [readToolSpec.name]: implement(readToolSpec, executeRead),
  [writeToolSpec.name]: implement(writeToolSpec, executeWrite),
  [editToolSpec.name]: implement(editToolSpec, executeEdit),
  [bashToolSpec.name]: implement(bashToolSpec, executeBash),
  [globToolSpec.name]: implement(globToolSpec, executeGlob),
  [grepToolSpec.name]: implement(grepToolSpec, executeGrep),
  [webFetchToolSpec.name]: implement(webFetchToolSpec, executeWebFetch),
  ...Object.fromEntries(
    TOOL_SPECS.filter((spec) => spec.editFile !== undefined).map((spec) => [
      spec.name,
      implement(spec, (input, context) => executeFileEdit(spec, input as Record<string, unknown>, context)),
    ]),
  ),
};

/** Zod issues as `field: problem`, joined with `; ` — e.g. `old_string: expected string, received undefined`. */
export function formatValidationIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.map(String).join('.');
      const message = issue.message.replace(/^Invalid input: /, '');
      return field === '' ? message : `${field}: ${message}`;
    })
    .join('; ');
}

/** A thrown error (usually a Node fs error) as a message the model can act on. */
function describeToolError(name: string, error: unknown): string {
  const errno = error as NodeJS.ErrnoException;
  const where = errno.path === undefined ? '' : ` (${errno.path})`;
  switch (errno.code) {
    case 'EACCES':
    case 'EPERM':
      return `${name} failed: permission denied${where}. Choose a path you are allowed to access.`;
    case 'ENOENT':
      return `${name} failed: no such file or directory${where}.`;
    case 'ENOTDIR':
      return `${name} failed: a component of the path is not a directory${where}.`;
    case 'EISDIR':
      return `${name} failed: the path is a directory${where}.`;
    case 'EROFS':
      return `${name} failed: read-only file system${where}.`;
    case 'ENOSPC':
      return `${name} failed: no space left on device${where}.`;
    default:
      return `${name} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Run tool `name` with raw model input. Never throws for tool failures (they come back as
 * `isError: true`); throws only when `context.signal` is aborted.
 */
export async function executeTool(name: string, input: unknown, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const implementation = getToolSpec(name) !== undefined && Object.hasOwn(IMPLEMENTATIONS, name) ? IMPLEMENTATIONS[name] : undefined;
  if (implementation === undefined) {
    return { isError: true, content: `No such tool available: ${name}. Available tools: ${TOOL_NAMES.join(', ')}` };
  }
  try {
    return await implementation(input, context);
  } catch (error) {
    context.signal.throwIfAborted();
    return { isError: true, content: describeToolError(name, error) };
  }
}
