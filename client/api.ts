/**
 * Typed client API for conversations: start, send follow-ups, read status and events, abort,
 * end, and wait for a query's result. The CLI is a thin shell over this.
 */
import { type Client, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { type ConversationConfigInput, SEARCH_ATTRIBUTE_MODEL, SEARCH_ATTRIBUTE_STATUS, parseConversationConfig } from '../common/config';
import type { ResultMessage } from '../common/result';
import { MODEL_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE } from '../common/search-attributes';
import {
  type ConversationEvent,
  type ConversationStatus,
  type ConversationSummary,
  abortSignal,
  endSignal,
  eventsQuery,
  statusQuery,
  userInputSignal,
} from '../workflows/definitions';
import type { conversationWorkflow } from '../workflows';

/** Thrown for a conversation id the server does not know. */
export class ConversationNotFoundError extends Error {
  override readonly name = 'ConversationNotFoundError';
  constructor(readonly conversationId: string) {
    super(`No conversation with id "${conversationId}" was found. \`durable-agent list\` shows the conversations on this server.`);
  }
}

export interface StartOptions {
  id?: string;
  prompt?: string;
  config: ConversationConfigInput;
  taskQueue: string;
}

export class ConversationClient {
  constructor(readonly client: Client) {}

  /** Starts a conversation workflow; returns its id and the uuid of the first input. */
  async start(options: StartOptions): Promise<{ conversationId: string; inputUuid?: string; handle: WorkflowHandle<typeof conversationWorkflow> }> {
    const config = parseConversationConfig(options.config); // clear field errors before anything is sent
    const conversationId = options.id ?? newConversationId(options.prompt);
    const inputUuid = options.prompt ? randomUUID() : undefined;
    const searchAttributes = await this.supportedSearchAttributes();
    const handle = await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      workflowId: conversationId,
      taskQueue: options.taskQueue,
      args: [{ config: options.config, initialPrompt: options.prompt, initialPromptUuid: inputUuid }],
      staticSummary: options.prompt ? `durable-agent: ${oneLine(options.prompt, 120)}` : 'durable-agent conversation',
      staticDetails: `model: ${config.model}\ncwd: ${config.cwd}\nmax turns: ${config.maxTurns}`,
      typedSearchAttributes: searchAttributes
        ? [
            { key: STATUS_SEARCH_ATTRIBUTE, value: 'awaiting_input' },
            { key: MODEL_SEARCH_ATTRIBUTE, value: config.model },
          ]
        : undefined,
    });
    return { conversationId, inputUuid, handle };
  }

  /** Sends a follow-up; returns the input's uuid (the result's `input_uuid`). */
  async send(conversationId: string, prompt: string): Promise<string> {
    const uuid = randomUUID();
    await this.guard(conversationId, (handle) => handle.signal(userInputSignal, { prompt, uuid }));
    return uuid;
  }

  async status(conversationId: string): Promise<ConversationStatus> {
    return this.guard(conversationId, (handle) => handle.query(statusQuery));
  }

  async events(conversationId: string, afterSeq = 0): Promise<{ events: ConversationEvent[]; nextSeq: number }> {
    return this.guard(conversationId, (handle) => handle.query(eventsQuery, afterSeq));
  }

  async abort(conversationId: string, reason?: string): Promise<void> {
    await this.guard(conversationId, (handle) => handle.signal(abortSignal, { reason }));
  }

  async end(conversationId: string): Promise<void> {
    await this.guard(conversationId, (handle) => handle.signal(endSignal));
  }

  async summary(conversationId: string): Promise<ConversationSummary> {
    return this.guard(conversationId, (handle) => handle.result());
  }

  /**
   * Polls the events feed until the result for `inputUuid` arrives (also the result of a query
   * that consumed it as queued input, which names it in `input_uuids`), calling `onEvent` for each
   * event on the way (progress printing). Queries are cheap and work while the workflow runs.
   */
  async waitForResult(
    conversationId: string,
    inputUuid: string,
    options: { afterSeq?: number; onEvent?: (event: ConversationEvent) => void; pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<ResultMessage> {
    let afterSeq = options.afterSeq ?? 0;
    while (true) {
      options.signal?.throwIfAborted();
      const page = await this.events(conversationId, afterSeq);
      for (const event of page.events) {
        options.onEvent?.(event);
        if (event.message.type === 'result' && (event.message.input_uuid === inputUuid || event.message.input_uuids?.includes(inputUuid))) {
          return event.message;
        }
      }
      afterSeq = page.nextSeq;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
    }
  }

  private async guard<T>(conversationId: string, action: (handle: WorkflowHandle<typeof conversationWorkflow>) => Promise<T>): Promise<T> {
    try {
      return await action(this.client.workflow.getHandle<typeof conversationWorkflow>(conversationId));
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(conversationId);
      throw error;
    }
  }

  /** True when the server has the project's search attributes (a dev server started by us does). */
  private async supportedSearchAttributes(): Promise<boolean> {
    try {
      const response = await this.client.connection.operatorService.listSearchAttributes({ namespace: this.client.options.namespace });
      return Boolean(response.customAttributes?.[SEARCH_ATTRIBUTE_STATUS] && response.customAttributes?.[SEARCH_ATTRIBUTE_MODEL]);
    } catch {
      return false; // e.g. Temporal Cloud API keys without operator access
    }
  }
}

export function newConversationId(prompt?: string): string {
  const slug = (prompt ?? 'conversation')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40)
    .replace(/-$/, '');
  return `conversation-${slug || 'untitled'}-${randomUUID().slice(0, 8)}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
