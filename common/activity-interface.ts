/**
 * The activities as the workflow calls them: the interface lives on the shared side, so the
 * workflow bundle (and `common/`) never imports from `activities/`, not even a type (issue 20,
 * item 5). `activities/index.ts` builds an object that satisfies it (`createActivities(): Activities`),
 * so a signature that drifts fails the typecheck on the activities' side.
 */
import type {
  CallModelInput,
  CallModelLocalInput,
  CallModelLocalResult,
  CallModelResult,
  CompactConversationInput,
  CompactConversationResult,
  RunStopHooksInput,
  RunStopHooksResult,
  RunToolInput,
  RunToolResult,
  SessionContext,
} from './activity-types';
import type { GatherFactsInput, GatherFactsResult } from './permission-facts';
import type { SettingSource } from './permissions';
import type { OutputSchema, StructuredOutputCheck } from './structured-output';

export interface Activities {
  /** One model call by reference (streams, heartbeats, classifies API errors). */
  callModel(input: CallModelInput): Promise<CallModelResult>;
  /** The local first phase of a model call: an answer by its deadline, or a handoff. */
  callModelLocal(input: CallModelLocalInput): Promise<CallModelLocalResult>;
  /** seed §2.7: the compaction model call. */
  compactConversation(input: CompactConversationInput): Promise<CompactConversationResult>;
  /** One tool_use, journaled when it mutates. */
  runTool(input: RunToolInput): Promise<RunToolResult>;
  /** Permission facts gathered where the tool acts (issue 17). */
  gatherPermissionFacts(input: GatherFactsInput): Promise<GatherFactsResult>;
  /** CLAUDE.md, git state, settings, agents, commands: once per session. */
  loadSessionContext(input: { cwd: string; settingSources?: SettingSource[] }): Promise<SessionContext>;
  /** seed §2.9: the Stop hooks. */
  runStopHooks(input: RunStopHooksInput): Promise<RunStopHooksResult>;
  /** Issue 23: a StructuredOutput call checked against the conversation's JSON Schema (local, its verdict recorded). */
  checkStructuredOutput(input: { schema: OutputSchema; input: unknown }): Promise<StructuredOutputCheck>;
}
