/**
 * The one registry of replay switches (style §18; sdk-typescript `packages/workflow/src/flags.ts`).
 * Every `patched()` / `deprecatePatch()` of the workflow goes through this file: each id is
 * listed once, with what it guards and the commit that brought it in. A history recorded before a
 * patch takes the old branch on replay; a run started after it takes the new one (it records a
 * marker). test/unit/patches.test.ts checks that every id here is used and that nothing calls
 * Temporal's `patched()` with a literal.
 *
 * Retiring a patch (docs/architecture.md, "Replay switches"): once no running conversation can
 * still need the old branch (and no history under test/histories records the run before it),
 * replace `patched(P)` by `deprecatePatch(P)` and delete the old branch; one release later, when
 * no history has the marker without the deprecation, remove the call and the entry.
 *
 * Patch epochs. A run started on code that has an epoch records one marker for it, first thing in
 * the run ({@link decidePatchEpoch}, called at the top of every workflow entry point), and takes
 * every switch the epoch covers without asking Temporal again: no marker per switch, and no
 * switch asked for the first time in the middle of a run. That matters for replay, not only for
 * history size: with local activities (model calls, Read/Glob/Grep), sdk-core can complete a
 * workflow task with a local activity's marker while the workflow has not yet seen its result
 * (a query answered while the local activity ran); the result then reaches the workflow in the
 * next task, but on replay it arrives one task earlier, before Temporal has told the workflow
 * about the next task's patch markers. A switch first asked right after that result answers
 * `false` on replay where it answered `true` live, and the run fails with "Non-deprecated patch
 * marker encountered … but there is no corresponding change command" (seen on
 * @temporalio/worker 1.23.0 and 1.24.0; docs/architecture.md, "Replay switches"). An epoch is
 * decided before any local activity, so its answer never depends on where a result lands. Runs
 * started before the epoch (no marker) ask each switch as before.
 *
 * Adding a switch: register it in PATCHES and append a new epoch covering every switch
 * (test/unit/patches.test.ts fails otherwise). New runs then record only the newest epoch; a run
 * started on the previous epoch asks the new switch where it is used, as before epochs existed.
 */
import { deprecatePatch as temporalDeprecatePatch, patched as temporalPatched } from '@temporalio/workflow';

/** One replay switch: the id its marker records, what the patched branch changed, and since when. */
export interface Patch {
  readonly id: string;
  readonly note: string;
  /** Date and commit that introduced it (`git log -S '<id>'`). */
  readonly since: string;
}

export const PATCHES = {
  localReadOnlyTools: {
    id: 'local-read-only-tools',
    note: 'Read, Glob and Grep run as local activities on the workflow’s queue (older histories scheduled regular runTool activities).',
    since: '2026-11-29 be0491f',
  },
  localModelCalls: {
    id: 'local-model-calls',
    note: 'A model call starts as a callModelLocal local activity and is handed over when slow (older histories schedule callModel only).',
    since: '2026-11-30 a91f913',
  },
  streamingWorkflowStream: {
    id: 'streaming-workflow-stream',
    note: 'The live channel (WorkflowStream): events, tool starts and results published by the workflow (older runs had none).',
    since: '2026-11-30 3db1665',
  },
  weighContinueAsNewSuggestion: {
    id: 'weigh-continue-as-new-suggestion',
    note: 'The server’s continue-as-new suggestion is followed only past 10,000 events or 4 MB (older runs followed it at once).',
    since: '2026-11-30 e39e665',
  },
  permissionsCheck: {
    id: 'permissions-check',
    note: 'Every tool run is checked by the PermissionGate, which may wait for decidePermission (older runs ran every tool unchecked).',
    since: '2026-11-30 1ca2a48',
  },
  temporalUiSummaries: {
    id: 'temporal-ui-summaries-and-sparse-search-attributes',
    note: 'Summaries on commands, and search attributes upserted only when the coarse status changes (older runs upserted per phase).',
    since: '2026-11-30 09122f5',
  },
  toolPrefetch: {
    id: 'tool-prefetch',
    note: 'A read the model call’s local phase ran already takes the place of a local runTool (older histories schedule it).',
    since: '2026-11-30 b7f9229',
  },
  slashCommandsProcessInput: {
    id: 'slash-commands-process-input',
    note: 'A "/command" input is processed as a slash command (older histories sent it to the model as text).',
    since: '2026-11-30 f48ecc2',
  },
  slashCommandsReloadContext: {
    id: 'slash-commands-reload-context',
    note: 'The session context is loaded again before the next input after a compaction or /clear (older runs kept the first).',
    since: '2026-11-30 f48ecc2',
  },
  slashCommandsQueuedCommandWaits: {
    id: 'slash-commands-queued-command-waits',
    note: 'A slash command queued behind a running query waits for its own turn (older runs folded it into the next query).',
    since: '2026-11-30 f48ecc2',
  },
  permissionFacts: {
    id: 'permission-facts',
    note: 'Permission decisions on facts gathered where the tool acts, by gatherPermissionFacts (older runs decided on the input alone).',
    since: '2026-12-01 2cade9b',
  },
  permissionsByDefault: {
    id: 'permissions-by-default',
    note: 'A conversation started without a permissions config is checked with the default one (older runs ran every tool unchecked).',
    since: '2026-12-01 2cade9b',
  },
  modelsApiDefaultModel: {
    id: 'models-api-default-model',
    note: 'A config without model gets today’s default (older histories keep the old default their compactions were decided on).',
    since: '2026-12-01 7f8abea',
  },
  temporalUiTimeline: {
    id: 'temporal-ui-permission-waits-and-prefetched-reads',
    note: 'Timeline summaries: a permission wait names the call and what ends it; a model call names the prefetched reads it sends.',
    since: '2026-12-01 877abe8',
  },
  upgradeOnContinueAsNew: {
    id: 'upgrade-on-continue-as-new',
    note: 'Worker Versioning: the next run starts on the deployment’s current version (AUTO_UPGRADE), and a run continues as new between queries once a newer version is current (older runs continued as new with no versioning option).',
    since: '2026-12-01 cb97f1d',
  },
  structuredOutputActivity: {
    id: 'structured-output-activity',
    note: 'A StructuredOutput call is checked by a JSON Schema validator in the checkStructuredOutput local activity, its verdict recorded (older histories checked it with zod in the workflow).',
    since: '2026-12-01 474bb8a',
  },
  sqlSafeSearchAttributes: {
    id: 'sql-safe-search-attributes',
    note: 'Search attribute values made storable by SQL visibility: a Text value with a colon broke the tsvector cast (older histories upserted values as they were).',
    since: '2026-12-01 8346e9f',
  },
  taskList: {
    id: 'task-list',
    note: 'TaskCreate / TaskGet / TaskList / TaskUpdate are answered in the workflow from its task list (older histories sent them to runTool, which refused them).',
    since: '2026-12-02 b3e2dbc',
  },
  scheduleWakeup: {
    id: 'schedule-wakeup',
    note: 'ScheduleWakeup starts a labelled durable timer whose prompt becomes the next input, and /loop is a command (older histories sent ScheduleWakeup to runTool and answered /loop as unknown).',
    since: '2026-12-02 b3e2dbc',
  },
  cronSchedules: {
    id: 'cron-schedules',
    note: 'CronCreate / CronDelete / CronList run the cron Schedule activities, with a timer to each recurring job’s expiry (older histories sent them to runTool).',
    since: '2026-12-02 b3e2dbc',
  },
  mcpTools: {
    id: 'mcp-tools',
    note: 'MCP servers as tools (issue 22): the session loads the MCP config and lists the servers at its start, and re-lists on list_changed and /mcp (older runs issued none of these activities).',
    since: '2026-12-02 4e31358',
  },
  backgroundAgents: {
    id: 'background-agents',
    note: 'Agent takes `model` and `run_in_background` (a background child started without waiting, its result a notification; TaskOutput/TaskStop on agent ids) and SendMessage continues a background agent (older histories rejected those fields and had no SendMessage).',
    since: '2026-12-02 a4c581b',
  },
  hooksLifecycle: {
    id: 'hooks-lifecycle',
    note: 'Claude Code’s hooks besides Stop (issue 22): loadHookSettings at session start, and runHooks for SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Notification and SessionEnd when a command matches (older runs loaded and ran none).',
    since: '2026-12-02 2c493a4',
  },
  backgroundCommands: {
    id: 'background-commands',
    note: 'Bash with run_in_background, TaskOutput and TaskStop run on the background-commands route: start, supervise (not awaited), read, stop, and a task notification at the end; the next run supervises running tasks again (older histories sent these calls to runTool, which rejected them).',
    since: '2026-12-02 142b57c',
  },
  sendMessageFinishedAgents: {
    id: 'send-message-finished-agents',
    note: 'A foreground Agent call is recorded as an agent (its result names its agent id), and SendMessage to a finished agent reads its transcript (readAgentTranscript) and continues it in a new child started with it (older runs kept no foreground agents and refused SendMessage to an ended one).',
    since: '2026-12-02 10e9bc1',
  },
  mcpApprovalInChat: {
    id: 'mcp-approval-in-chat',
    note: 'The approveMcpServers update (a person answers "Use the MCP server … from .mcp.json?"): saveMcpApprovals, then loadMcpConfig and listMcpServers as /mcp (older runs had no such update).',
    since: '2026-12-02 8207481',
  },
  subagentMcpTools: {
    id: 'subagent-mcp-tools',
    note: 'A subagent gets its parent’s MCP tools (general-purpose: all; an agent with a tools list: the mcp__ names it lists) with the parent’s recorded listing in SubagentOrigin.mcp, calling them on the parent’s connections (older runs gave children no MCP tools).',
    since: '2026-12-02 91eb38e',
  },
  cronFiresWhenIdle: {
    id: 'cron-fires-when-idle',
    note: 'A cron job’s prompt that arrives while a query runs waits for that query’s end and runs as its own query, as Claude Code fires jobs only while idle (older runs let the running query take it before its next model call).',
    since: '2026-12-02 ac0fd8e',
  },
  backgroundAgentWatch: {
    id: 'background-agent-watch',
    note: 'After continue-as-new a run watches each background agent still there (watchAgentWorkflow on the main queue): one terminated or failed from outside is reported once and stops holding off the idle timeout (older runs had no handle on it and waited forever).',
    since: '2026-12-02 f2320be',
  },
} as const satisfies Record<string, Patch>;

export type PatchName = keyof typeof PATCHES;

/** A patch epoch: one marker standing for every switch it covers (see the top of this file). */
export interface PatchEpoch {
  readonly id: string;
  readonly note: string;
  readonly since: string;
  /** The switches a run started with this epoch takes without asking (all registered before it). */
  readonly covers: readonly PatchName[];
}

/** Newest last; the newest covers every registered switch. Its marker is written once per run. */
/** The switches registered before the first epoch (frozen: a later epoch adds to a copy). */
const EPOCH_1: readonly PatchName[] = [
  'localReadOnlyTools',
  'localModelCalls',
  'streamingWorkflowStream',
  'weighContinueAsNewSuggestion',
  'permissionsCheck',
  'temporalUiSummaries',
  'toolPrefetch',
  'slashCommandsProcessInput',
  'slashCommandsReloadContext',
  'slashCommandsQueuedCommandWaits',
  'permissionFacts',
  'permissionsByDefault',
  'modelsApiDefaultModel',
  'temporalUiTimeline',
  'upgradeOnContinueAsNew',
  'structuredOutputActivity',
  'sqlSafeSearchAttributes',
  'taskList',
  'scheduleWakeup',
  'cronSchedules',
  'mcpTools',
  'backgroundAgents',
  'hooksLifecycle',
  'backgroundCommands',
  'sendMessageFinishedAgents',
  'mcpApprovalInChat',
  'subagentMcpTools',
];

export const PATCH_EPOCHS: readonly PatchEpoch[] = [
  {
    id: 'patch-epoch-1',
    note: 'Every switch up to subagent-mcp-tools, decided at the start of the run (older runs ask each switch where it is used).',
    since: '2026-12-02 49c2c04',
    covers: EPOCH_1,
  },
  {
    id: 'patch-epoch-2',
    note: 'Epoch 1 and cron-fires-when-idle (runs started on epoch 1 ask that one where it is used).',
    since: '2026-12-02 ac0fd8e',
    covers: [...EPOCH_1, 'cronFiresWhenIdle'],
  },
  {
    id: 'patch-epoch-3',
    note: 'Epoch 2 and background-agent-watch (runs started on an earlier epoch ask that one where it is used).',
    since: '2026-12-02 f2320be',
    covers: [...EPOCH_1, 'cronFiresWhenIdle', 'backgroundAgentWatch'],
  },
];

/**
 * The ids this run takes without asking, per workflow run. Kept on the workflow's global object:
 * the SDK gives each workflow its own globals (also when it reuses a V8 context), not its own
 * module variables.
 */
const EPOCH_KEY = '__durableAgentPatchEpochCovers';
type EpochHolder = { [EPOCH_KEY]?: ReadonlySet<string> };

/**
 * First thing in every workflow entry point, before any command: which epoch this run was started
 * with. A new run records the newest epoch's marker; a replayed run started before it does not
 * have the marker and asks each switch as it did. Decided once per run.
 */
export function decidePatchEpoch(): void {
  const holder = globalThis as EpochHolder;
  if (holder[EPOCH_KEY] !== undefined) return;
  const covered = new Set<string>();
  // Newest first: a run that has the newest epoch's marker was started on code with all of them.
  for (const epoch of [...PATCH_EPOCHS].reverse()) {
    if (temporalPatched(epoch.id)) {
      for (const name of epoch.covers) covered.add(PATCHES[name].id);
      break;
    }
  }
  holder[EPOCH_KEY] = covered;
}

/** Whether the run's epoch covers this switch (false when no epoch was decided: ask as before). */
function coveredByEpoch(patch: Patch): boolean {
  return (globalThis as EpochHolder)[EPOCH_KEY]?.has(patch.id) ?? false;
}

/** Whether this run takes the patched branch (Temporal's `patched()` for a registered switch). */
export function patched(patch: Patch): boolean {
  return coveredByEpoch(patch) || temporalPatched(patch.id);
}

/** A retired switch: the new branch always runs, and histories with the marker still replay. */
export function deprecatePatch(patch: Patch): void {
  if (!coveredByEpoch(patch)) temporalDeprecatePatch(patch.id);
}
