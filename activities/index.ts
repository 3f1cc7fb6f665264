/**
 * The activities, built by a factory that closes over clients and config (style §8), so the
 * worker wires real services and tests wire real-but-local ones (the scripted model server, temp
 * directories).
 */
import Anthropic from '@anthropic-ai/sdk';
import { smallModelReader } from './small-model';
import type { Client } from '@temporalio/client';
import os from 'node:os';
import path from 'node:path';
import { requestContextQuery, toolUseStreamedSignal, transcriptSliceQuery } from '../common/worker-messages';
import { type CallModelDeps, type ToolUseReporter, createCallModel, createCallModelLocal } from './call-model';
import { createCompactConversation } from './compact-conversation';
import { gatherPermissionFacts } from './permission-facts/gather';
import { createToolRunner } from './run-tool';
import { loadSessionContext } from './session-context';
import { loadSkillBody } from './skills';
import { createRunStopHooks } from './hooks/stop-hooks';
import { checkStructuredOutput } from './structured-output';
import { executeTool } from './tools';
import { installationIdLoader } from './installation-id';
import { createModelResolver } from './model-resolver';
import { type TranscriptCache, type TranscriptSource, processTranscriptCache } from './transcript-cache';
// ---- issue 22 (extensions) ----
import { createHookActivities } from './hooks/run-hooks';
import { McpConnectionManager, createMcpActivities } from './mcp/activities';
// Issue 21 (background work): its own block, append only.
import { createBackgroundActivities } from './background';
import { createAgentTranscriptActivities } from './agent-transcript';
import type { Activities } from '../common/activity-interface';

import { createCheckpointActivities } from './checkpoints/activities';
import { createWorktreeActivities } from './worktrees';
export type { Activities } from '../common/activity-interface';

export interface ActivityDeps {
  /** Undefined when no API key or base URL is configured: model calls then fail with a clear error. */
  anthropic: Anthropic | undefined;
  /** Root for journals and persisted tool results (default ~/.durable-agent). */
  stateDir: string;
  /**
   * Used to report streamed tool_use blocks to their workflow (streaming tool execution) and to
   * fill transcript-cache misses from the workflow's queries.
   */
  temporalClient?: Client;
  /** Where model calls materialise their requests; the worker's sinks must feed the same cache (default: the process's). */
  transcriptCache?: TranscriptCache;
  /** Overrides where cache misses are filled from (default: the workflow's queries through temporalClient). */
  transcriptSource?: TranscriptSource;
  // ---- issue 22 (extensions): MCP and hooks ----
  /** The worker's MCP connections (default: one manager per createActivities call); close it on shutdown. */
  mcpConnections?: McpConnectionManager;
  /** Issue 33: the user's home (default os.homedir()): the user's hook settings, and HOME for their hooks. */
  home?: string;
}

/** Cache misses are filled from the conversation's own queries (they write no history). */
export function workflowTranscriptSource(client: Client): TranscriptSource {
  return {
    slice: (conversationId, from, maxBytes) => client.workflow.getHandle(conversationId).query(transcriptSliceQuery, { from, maxBytes }),
    context: (conversationId, digest) => client.workflow.getHandle(conversationId).query(requestContextQuery, digest),
  };
}

/** The activities, as the shared interface the workflow calls them by (common/activity-interface.ts). */
export function createActivities(deps: ActivityDeps): Activities {
  const reportToolUse: ToolUseReporter | undefined = deps.temporalClient
    ? async (target, report) => {
        await deps
          .temporalClient!.workflow.getHandle(target.workflowId, target.runId)
          .signal(toolUseStreamedSignal, { requestId: target.requestId, ...report });
      }
    : undefined;
  const tools = createToolRunner({
    stateDir: deps.stateDir,
    executeTool,
    temporalClient: deps.temporalClient,
    readWithSmallModel: deps.anthropic ? smallModelReader(deps.anthropic) : undefined,
  });
  const modelDeps: CallModelDeps = {
    anthropic: deps.anthropic,
    reportToolUse,
    transcriptCache: deps.transcriptCache ?? processTranscriptCache,
    transcriptSource: deps.transcriptSource ?? (deps.temporalClient ? workflowTranscriptSource(deps.temporalClient) : undefined),
    temporalClient: deps.temporalClient,
    runToolToResult: tools.runToolToResult,
    models: createModelResolver(deps.anthropic),
    installationId: installationIdLoader(deps.stateDir),
  };
  const mcpConnections = deps.mcpConnections ?? new McpConnectionManager();
  return {
    callModel: createCallModel(modelDeps),
    callModelLocal: createCallModelLocal(modelDeps),
    compactConversation: createCompactConversation(modelDeps),
    runTool: tools.runTool,
    gatherPermissionFacts,
    loadSessionContext,
    loadSkillBody,
    runStopHooks: createRunStopHooks({ stateDir: deps.stateDir }),
    checkStructuredOutput,
    // ---- issue 22 (extensions): loadMcpConfig, listMcpServers, callMcpTool, loadHookSettings, runHooks ----
    ...createMcpActivities({ connections: mcpConnections, stateDir: deps.stateDir }),
    // mcp_tool hooks call through the same connections as the model's MCP calls.
    ...createHookActivities({ stateDir: deps.stateDir, anthropic: deps.anthropic, mcpConnections, ...(deps.home ? { home: deps.home } : {}) }),
    // Issue 21 (background work): background commands, TaskOutput/TaskStop, cron Schedules. Not called by workflows yet.
    ...createBackgroundActivities({ stateDir: deps.stateDir, temporalClient: deps.temporalClient }),
    // SendMessage to a finished agent (issue 21 item 3): readAgentTranscript.
    ...createAgentTranscriptActivities({ temporalClient: deps.temporalClient }),
    // Issue 31: workspace checkpoints (the ones before mutating tools are runTool's own).
    ...createCheckpointActivities({ stateDir: deps.stateDir }),
    // Issue 33: git worktrees (isolated agents, --worktree).
    ...createWorktreeActivities(),
  };
}

/** The Anthropic client from the environment; Temporal owns retries, so the SDK's are off. */
export function anthropicFromEnvironment(env: NodeJS.ProcessEnv = process.env): Anthropic | undefined {
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  const authToken = env.ANTHROPIC_AUTH_TOKEN || undefined;
  const baseURL = env.ANTHROPIC_BASE_URL || undefined;
  if (!apiKey && !authToken && !baseURL) return undefined;
  return new Anthropic({
    // A compatible local server (ANTHROPIC_BASE_URL) may need no key; the SDK insists on one.
    apiKey: apiKey ?? (authToken ? null : 'no-key-configured'),
    authToken: authToken ?? null,
    baseURL,
    maxRetries: 0,
    timeout: 10 * 60 * 1000,
  });
}

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DURABLE_AGENT_STATE_DIR || path.join(os.homedir(), '.durable-agent');
}
