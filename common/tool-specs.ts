/**
 * The tool registry both sides share: the workflow uses the specs for scheduling decisions
 * (seed §2.4), the activities for validation before execution. Pure: no Node imports.
 */
import type { CallFacts } from './permission-facts';
import type { FileFormat, ToolSpec } from './tool-spec';
import { readToolSpec } from './tools/read';
import { writeToolSpec } from './tools/write';
import { editToolSpec } from './tools/edit';
import { notebookEditToolSpec } from './tools/notebook-edit';
import { bashToolSpec } from './tools/bash';
import { globToolSpec } from './tools/glob';
import { grepToolSpec } from './tools/grep';
import { webFetchToolSpec } from './tools/web-fetch';
import { agentToolSpec } from './tools/agent';
import { taskOutputToolSpec } from './tools/task-output';
import { taskStopToolSpec } from './tools/task-stop';
import { sendMessageToolSpec } from './tools/send-message';
import { taskCreateToolSpec } from './tools/task-create';
import { taskGetToolSpec } from './tools/task-get';
import { taskListToolSpec } from './tools/task-list';
import { taskUpdateToolSpec } from './tools/task-update';
import { scheduleWakeupToolSpec } from './tools/schedule-wakeup';
import { cronCreateToolSpec } from './tools/cron-create';
import { cronDeleteToolSpec } from './tools/cron-delete';
import { cronListToolSpec } from './tools/cron-list';
import { enterWorktreeToolSpec } from './tools/enter-worktree';
import { exitWorktreeToolSpec } from './tools/exit-worktree';
import { skillToolSpec } from './tools/skill';

// What older importers take from here; a tool's own constants and types are imported from its spec file.
export { agentInputSchema, type AgentInput } from './tools/agent';
export { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, interpretExitCode } from './tools/bash';

/**
 * Every tool the agent offers, in the order the model sees them: the one list of tools, and the
 * one place a new tool is registered (its spec file's import above and its entry here). Every
 * name set, the permission engine's file rules, the facts gathered, the approval preview, the
 * activity-side implementations of file-editing tools (activities/tools/index.ts) and Read's view
 * of a file format derive from these specs.
 */
export const TOOL_SPECS: readonly ToolSpec[] = [
  readToolSpec,
  writeToolSpec,
  editToolSpec,
  notebookEditToolSpec,
  bashToolSpec,
  globToolSpec,
  grepToolSpec,
  webFetchToolSpec,
  agentToolSpec,
  // Issue 21: background commands (workflows/background/commands.ts).
  taskOutputToolSpec,
  taskStopToolSpec,
  // Issue 21: background agents (SendMessage); the task list, wakeups and cron jobs (answered in the workflow: workflows/background/).
  sendMessageToolSpec,
  taskCreateToolSpec,
  taskGetToolSpec,
  taskListToolSpec,
  taskUpdateToolSpec,
  scheduleWakeupToolSpec,
  cronCreateToolSpec,
  cronDeleteToolSpec,
  cronListToolSpec,
  // Issue 33: worktrees (answered in the workflow: workflows/session/worktree-session.ts).
  enterWorktreeToolSpec,
  exitWorktreeToolSpec,
  // Issue 33 §3: Agent Skills (answered in the workflow: workflows/session/skills.ts); offered only when a skill the model may invoke exists.
  skillToolSpec,
];

/** Claude Code's tool names, in `TOOL_SPECS` order. */
export const TOOL_NAMES: readonly string[] = TOOL_SPECS.map((spec) => spec.name);

/** The names of the tools whose spec passes `test`, in `TOOL_SPECS` order: every tool-name set derives from the specs. */
export function toolNamesWhere(test: (spec: ToolSpec) => boolean): ReadonlySet<string> {
  return new Set(TOOL_SPECS.filter(test).map((spec) => spec.name));
}

/** File tools that only read: Read rules cover them. */
export const READ_TOOLS = toolNamesWhere((spec) => spec.fileAccess?.access === 'read');
/** File tools that change files: Edit rules cover them. */
export const EDIT_TOOLS = toolNamesWhere((spec) => spec.fileAccess?.access === 'write');

/** The file format a spec declares for `filePath` (by how its name ends), if any: Read shows such a file as the format says. */
export function fileFormatFor(filePath: string): FileFormat | undefined {
  const name = filePath.toLowerCase();
  return TOOL_SPECS.find((spec) => spec.fileFormat !== undefined && name.endsWith(spec.fileFormat.extension.toLowerCase()))?.fileFormat;
}

/** True when `name` is one of our tools. */
export function isToolName(name: string): boolean {
  return TOOL_NAMES.includes(name);
}

/** The spec named `name`, or undefined for an unknown tool (which becomes an is_error result). */
export function getToolSpec(name: string): ToolSpec | undefined {
  return TOOL_SPECS.find((spec) => spec.name === name);
}

/**
 * The tool's own decision on its parsed input (seed §2.4); unknown tools and invalid input count as
 * unsafe. `facts`: the call's gathered facts (Bash decides on its parsed command; without them it is unsafe).
 */
export function isToolUseConcurrencySafe(block: { name: string; input: unknown }, facts?: CallFacts): boolean {
  return decide(block, (spec, input) => spec.isConcurrencySafe(input, facts));
}

/**
 * Whether a call may start while the model still streams: concurrency-safe AND read-only — a
 * retried model call can answer differently, so work started early must have no side effects
 * (an Agent runs beside its siblings, but only once the answer is final).
 */
export function isToolUseStartableEarly(block: { name: string; input: unknown }, facts?: CallFacts): boolean {
  return decide(block, (spec, input) => spec.isConcurrencySafe(input, facts) && spec.isReadOnly(input, facts));
}

/** Whether a call's answer to the questions above depends on facts gathered where it acts (Bash: its parsed command). */
export function concurrencyNeedsFacts(name: string): boolean {
  return getToolSpec(name)?.shellCommandField !== undefined;
}

function decide(block: { name: string; input: unknown }, decision: (spec: ToolSpec, input: unknown) => boolean): boolean {
  const spec = getToolSpec(block.name);
  if (!spec) return false;
  const parsed = spec.inputSchema.safeParse(block.input);
  if (!parsed.success) return false;
  try {
    return decision(spec, parsed.data);
  } catch {
    return false;
  }
}
