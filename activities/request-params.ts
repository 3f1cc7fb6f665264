/**
 * The Messages API request of a model call, from its materialised parts and the model as the
 * Models API describes it (activities/model-resolver.ts). Pure. What it adds, as Claude Code sends
 * it (docs/design/claude-code-observed.md):
 *  - `max_tokens` never above the model's maximum (the API refuses more with a 400);
 *  - a prompt-cache breakpoint on the last block of the last message, so each request reads the
 *    previous one's prefix from the cache (the system prompt keeps its own stable breakpoints;
 *    at most 4 in all);
 *  - extended thinking where the model's capabilities offer it: `{type: "adaptive"}` with
 *    `output_config.effort`, else `{type: "enabled", budget_tokens}`; `{type: "disabled"}` when the
 *    conversation turned it off; `context_management` keeps every thinking block (cache-friendly);
 *  - `metadata.user_id`: a hashed per-installation id and the conversation id.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { CallModelInput, SystemPromptBlock } from '../common/activity-types';
import type { ApiMessage } from '../common/messages';
import { type EffortLevel, type ModelInfo, ONE_MILLION_CONTEXT_WINDOW, requestModelId, wantsOneMillionWindow } from '../common/models';

/** The API's limit on blocks with cache_control in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;
/** The beta that opens the 1M-token window on a model whose native window is smaller. */
export const ONE_MILLION_CONTEXT_BETA = 'context-1m-2025-08-07';
/** The API's smallest thinking budget. */
export const MIN_THINKING_BUDGET_TOKENS = 1_024;
/** Thinking budget per effort level where only `enabled` thinking is offered (never above half of max_tokens). */
export const THINKING_BUDGET_BY_EFFORT: Readonly<Record<EffortLevel, number>> = { low: 4_000, medium: 10_000, high: 32_000, max: 64_000 };
const EPHEMERAL = { type: 'ephemeral' } as const;

export interface RequestOptions {
  /** Extended thinking (the conversation's `thinking`; default on). */
  thinking?: boolean;
  /** `output_config.effort` (default: high, as Claude Code sends it). */
  effort?: EffortLevel;
  /** `metadata.user_id`; absent: no metadata. */
  userId?: string;
  /** Breakpoint on the last message (default on; benches measure without it). */
  cacheMessages?: boolean;
}

/** The beta that `context_management` belongs to (beta-only in @anthropic-ai/sdk 1.14.0). */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

/** The fields the SDK's MessageCreateParams (1.14.0) has only on its beta surface. */
interface BetaFields {
  context_management?: { edits: Array<{ type: string; keep?: unknown }> };
}
type ThinkingFields = Pick<Anthropic.MessageCreateParamsNonStreaming, 'thinking' | 'output_config'> & BetaFields;

/** A request's body (without `stream`) and the beta headers it needs. */
export interface ModelRequest {
  params: Anthropic.MessageCreateParamsNonStreaming & BetaFields;
  betas: string[];
}

/** Where cache_control may sit: tools, system blocks and message content blocks. */
function breakpointsIn(system: readonly SystemPromptBlock[]): number {
  return system.filter((block) => block.cache_control).length;
}

/**
 * `messages` with a cache breakpoint on the last cacheable block of the last message (a copy;
 * the input is not changed), unless the request already has `MAX_CACHE_BREAKPOINTS`. Thinking
 * blocks take no cache_control; a string content becomes one text block.
 */
export function withMessageBreakpoint(messages: readonly ApiMessage[], breakpointsBefore: number): ApiMessage[] {
  const out = messages.map((message) => ({ ...message }));
  if (breakpointsBefore >= MAX_CACHE_BREAKPOINTS) return out;
  for (let m = out.length - 1; m >= 0; m--) {
    const message = out[m];
    const content = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : [...message.content];
    for (let b = content.length - 1; b >= 0; b--) {
      const block = content[b] as { type: string; text?: string };
      if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
      if (block.type === 'text' && !block.text) continue; // the API refuses cache_control on empty text
      content[b] = { ...content[b], cache_control: EPHEMERAL } as unknown as (typeof content)[number];
      out[m] = { ...message, content };
      return out;
    }
  }
  return out;
}

/** The `thinking`, `output_config` and `context_management` fields for `model`. */
export function thinkingParams(model: ModelInfo, maxTokens: number, options: RequestOptions): ThinkingFields {
  const capabilities = model.capabilities;
  const effort = options.effort ?? 'high';
  const out: Record<string, unknown> = {};
  if (capabilities.effort.includes(effort)) out.output_config = { effort };
  const wanted = options.thinking !== false;
  let thinking: Record<string, unknown> | undefined;
  if (wanted && capabilities.adaptiveThinking) thinking = { type: 'adaptive' };
  else if (wanted && capabilities.enabledThinking) {
    // At most half of max_tokens: the answer after the thinking needs room too.
    const budget = Math.min(THINKING_BUDGET_BY_EFFORT[effort], Math.floor(maxTokens / 2));
    if (budget >= MIN_THINKING_BUDGET_TOKENS) thinking = { type: 'enabled', budget_tokens: budget };
  }
  if (thinking) {
    out.thinking = thinking;
    // Keep every earlier thinking block: clearing them would change the cached prefix each turn.
    if (capabilities.clearThinking) out.context_management = { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] };
  } else if (!wanted && capabilities.disabledThinking && (capabilities.adaptiveThinking || capabilities.enabledThinking)) {
    out.thinking = { type: 'disabled' };
  }
  return out as ThinkingFields;
}

/**
 * Thinking blocks the request may carry: those of assistant turns before the current tool loop
 * are dropped when the model keeps no earlier thinking (no clear_thinking edit is sent, so the
 * API would ignore them); all of them are dropped when no thinking is asked for and the model
 * can do without (a fallback model, or thinking turned off).
 */
export function thinkingBlocksFor(messages: readonly ApiMessage[], keepEarlier: boolean, keepAny: boolean): ApiMessage[] {
  if (keepEarlier && keepAny) return [...messages];
  // The current tool loop starts after the last user message that carries no tool_result.
  let loopStart = 0;
  for (let m = messages.length - 1; m >= 0; m--) {
    const message = messages[m];
    if (message.role !== 'user') continue;
    const blocks = typeof message.content === 'string' ? [] : message.content;
    if (!blocks.some((block) => block.type === 'tool_result')) {
      loopStart = m;
      break;
    }
  }
  const out: ApiMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant' || typeof message.content === 'string' || (keepAny && index >= loopStart)) {
      out.push(message);
      return;
    }
    const content = message.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
    if (content.length > 0) out.push({ ...message, content });
  });
  return out;
}

/** Whether the request ends with tool results whose assistant turn does not open with a thinking block. */
export function lastToolTurnLacksThinking(messages: readonly ApiMessage[]): boolean {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user' || typeof last.content === 'string' || !last.content.some((block) => block.type === 'tool_result')) return false;
  const turn = [...messages].reverse().find((message) => message.role === 'assistant');
  if (!turn || typeof turn.content === 'string') return false;
  const first = turn.content[0];
  return first?.type !== 'thinking' && first?.type !== 'redacted_thinking';
}

/** The whole request of a model call (callModel, callModelLocal, compaction). */
export function buildModelRequest(
  input: Pick<CallModelInput, 'model' | 'maxTokens'>,
  request: { system: SystemPromptBlock[]; messages: ApiMessage[]; tools: Anthropic.ToolUnion[] },
  model: ModelInfo,
  options: RequestOptions = {},
): ModelRequest {
  const maxTokens = Math.max(1, Math.min(input.maxTokens, model.maxOutputTokens));
  const thinking = thinkingParams(model, maxTokens, options);
  const thinkingOn = thinking.thinking !== undefined && (thinking.thinking as { type: string }).type !== 'disabled';
  // A model that always thinks (no `disabled`) keeps its blocks even when thinking was "turned off".
  const keepAny = thinkingOn || (!model.capabilities.disabledThinking && (model.capabilities.adaptiveThinking || model.capabilities.enabledThinking));
  const keepEarlier = thinking.context_management !== undefined || !thinkingOn;
  let messages = thinkingBlocksFor(request.messages, keepEarlier, keepAny);
  // With `enabled` thinking the API wants the tool loop's last assistant turn to open with its
  // thinking block; one that has none (written by another model, before a fallback) goes without.
  if ((thinking.thinking as { type?: string } | undefined)?.type === 'enabled' && lastToolTurnLacksThinking(messages)) {
    delete thinking.thinking;
    delete thinking.context_management;
  }
  if (options.cacheMessages !== false) messages = withMessageBreakpoint(messages, breakpointsIn(request.system));
  const betas = [
    ...(wantsOneMillionWindow(input.model) && model.contextWindow < ONE_MILLION_CONTEXT_WINDOW ? [ONE_MILLION_CONTEXT_BETA] : []),
    ...(thinking.context_management ? [CONTEXT_MANAGEMENT_BETA] : []),
  ];
  return {
    params: {
      model: requestModelId(input.model),
      max_tokens: maxTokens,
      system: request.system,
      messages: messages as Anthropic.MessageParam[],
      tools: request.tools,
      ...thinking,
      ...(options.userId ? { metadata: { user_id: options.userId } } : {}),
    },
    betas,
  };
}
