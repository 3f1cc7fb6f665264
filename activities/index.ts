/**
 * The activities, built by a factory that closes over clients and config (style §8), so the
 * worker wires real services and tests wire real-but-local ones (the scripted model server, temp
 * directories).
 */
import Anthropic from '@anthropic-ai/sdk';
import type { Client } from '@temporalio/client';
import os from 'node:os';
import path from 'node:path';
import { toolUseStreamedSignal } from '../workflows/definitions';
import { type ToolUseReporter, createCallModel } from './call-model';
import { createRunTool } from './run-tool';
import { loadSessionContext } from './session-context';
import { runStopHooks } from './stop-hooks';
import { executeTool } from './tools';

export interface ActivityDeps {
  /** Undefined when no API key or base URL is configured: model calls then fail with a clear error. */
  anthropic: Anthropic | undefined;
  /** Root for journals and persisted tool results (default ~/.durable-agent). */
  stateDir: string;
  /** Used to report streamed tool_use blocks to their workflow (streaming tool execution). */
  temporalClient?: Client;
}

export function createActivities(deps: ActivityDeps) {
  const reportToolUse: ToolUseReporter | undefined = deps.temporalClient
    ? async (target, report) => {
        await deps
          .temporalClient!.workflow.getHandle(target.workflowId, target.runId)
          .signal(toolUseStreamedSignal, { requestId: target.requestId, ...report });
      }
    : undefined;
  return {
    callModel: createCallModel({ anthropic: deps.anthropic, reportToolUse }),
    runTool: createRunTool({ stateDir: deps.stateDir, executeTool }),
    loadSessionContext,
    runStopHooks,
  };
}

export type Activities = ReturnType<typeof createActivities>;

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
