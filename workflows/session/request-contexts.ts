/**
 * The request contexts of model calls by reference (docs/architecture.md, "Model calls by
 * reference"): each is named by its digest, fed to the worker's cache through the sink, and kept
 * for the `requestContext` query of a worker that missed it (the current query's, and a few before).
 */
import { proxySinks } from '@temporalio/workflow';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { McpToolDefinition } from '../../common/mcp-context';
import { TOOL_NAMES } from '../../common/tool-specs';
import { webSearchOffer } from '../../common/web-search';
import { modelInvocableSkills } from '../../common/skills';
import { SKILL_TOOL_NAME } from '../../common/tools/skill';
import { buildEffectiveSystemPrompt, buildUserContext, getSystemPrompt } from '../system-prompt';
import { valueDigest } from '../../common/digest';
import type { TranscriptCacheSinks } from '../definitions';
import type { Transcript } from '../transcript';

/** Request contexts kept for workers that miss them (the current query's, and a few before). */
const REQUEST_CONTEXTS_KEPT = 4;

const { transcriptCache } = proxySinks<TranscriptCacheSinks>();

/** The worker's cache learns every change of the transcript (model calls by reference); a new run starts it over. */
export function feedWorkerCache(transcript: Transcript): void {
  transcript.onChange((from, messages) => transcriptCache.feed(from, messages));
  if (transcript.length > 0) transcriptCache.feed(0, [...transcript.messages]);
}

export class RequestContexts {
  private readonly contexts = new Map<string, RequestContext>();
  private last: string | undefined;

  /** Names a context by digest and makes it available to workers; it becomes the one in effect. */
  register(context: RequestContext): string {
    const digest = valueDigest(context);
    this.last = digest;
    if (!this.contexts.has(digest)) {
      this.contexts.set(digest, context);
      while (this.contexts.size > REQUEST_CONTEXTS_KEPT) this.contexts.delete(this.contexts.keys().next().value as string);
      transcriptCache.putContext(digest, context);
    }
    return digest;
  }

  /** The digest in effect (registered by the last model call), if any. */
  get current(): string | undefined {
    return this.last;
  }

  get(digest: string): RequestContext | null {
    return this.contexts.get(digest) ?? null;
  }
}

/**
 * The prompt layers of a session (seed §2.5): system prompt and user context. The MCP servers'
 * instructions (issue 22) are the last system block, after every cache breakpoint: uncached, so a
 * server that changes them never invalidates the cached prefix.
 */
export function promptLayers(
  config: ConversationConfig,
  sessionContext: SessionContext | undefined,
  mcpInstructions?: string,
): { systemPrompt: RequestContext['system']; userContext: string | undefined } {
  const systemPrompt = buildEffectiveSystemPrompt({
    defaultPrompt: getSystemPrompt(sessionContext, config.model, { agentPrompt: config.agentSystemPrompt, tools: offeredToolNames(config, sessionContext) }),
    customSystemPrompt: config.customSystemPrompt,
    appendSystemPrompt: config.appendSystemPrompt,
  });
  return {
    systemPrompt: mcpInstructions?.trim() ? [...systemPrompt, { type: 'text', text: mcpInstructions }] : systemPrompt,
    userContext: buildUserContext(sessionContext),
  };
}

/**
 * The built-in tools offered: the config's list (all of them by default), without Skill while the
 * session has no skill the model may invoke (issue 33 §3) — so a conversation without skills is
 * offered, and digests, what it was before.
 */
export function offeredToolNames(config: ConversationConfig, sessionContext: SessionContext | undefined): string[] {
  const names = config.tools ?? TOOL_NAMES;
  const skills = modelInvocableSkills(sessionContext?.skills ?? []).length > 0;
  return names.filter((name) => name !== SKILL_TOOL_NAME || skills);
}

/** The request context of these prompt layers: with the tools offered (and the structured output's schema, the MCP tools). */
export function requestContextOf(
  config: ConversationConfig,
  system: RequestContext['system'],
  userContext: string | undefined,
  mcpTools: readonly McpToolDefinition[] = [],
  sessionContext?: SessionContext,
): RequestContext {
  const context: RequestContext = { system, userContext, toolNames: offeredToolNames(config, sessionContext) };
  if (config.jsonSchema) context.structuredOutputSchema = config.jsonSchema;
  // Absent when there are none: the digest of a conversation without MCP servers is what it was.
  if (mcpTools.length > 0) context.mcpTools = [...mcpTools];
  // Deny rules of the flags and of the settings files alike stop offering it.
  const deny = [...(config.permissions?.deny ?? []), ...(sessionContext?.permissionSettings?.deny.map((entry) => entry.rule) ?? [])];
  const webSearch = webSearchOffer({ webSearch: config.webSearch, tools: config.tools, permissions: { deny } });
  if (webSearch) context.webSearch = webSearch;
  return context;
}

/** Where the session's prompt layers come from (the config as it is now, the session context, the MCP servers, the hooks). */
export interface PromptSources {
  config(): ConversationConfig;
  sessionContext(): SessionContext | undefined;
  mcpInstructions(): string | undefined;
  mcpTools(): readonly McpToolDefinition[];
  /** SessionStart hooks' context joins the user context (issue 22). */
  userContext(base: string | undefined): string | undefined;
}

/** The session's prompt layers (seed §2.5) and the request contexts named after them. */
export class SessionPrompts {
  private readonly contexts = new RequestContexts();

  constructor(private readonly sources: PromptSources) {}

  /** System prompt and user context of the next request. */
  layers(): { systemPrompt: RequestContext['system']; userContext: string | undefined } {
    const layers = promptLayers(this.sources.config(), this.sources.sessionContext(), this.sources.mcpInstructions());
    return { ...layers, userContext: this.sources.userContext(layers.userContext) };
  }

  /** Names the request context (these prompt layers and the tools) by digest and makes it available to workers. */
  register(system: RequestContext['system'], userContext: string | undefined): string {
    return this.contexts.register(requestContextOf(this.sources.config(), system, userContext, this.sources.mcpTools(), this.sources.sessionContext()));
  }

  /** The digest of the request context in effect (registered by the last model call, or now). */
  current(): string {
    if (this.contexts.current) return this.contexts.current;
    const { systemPrompt, userContext } = this.layers();
    return this.register(systemPrompt, userContext);
  }

  /** `requestContext` query: the request context a worker missed in its cache. */
  get(digest: string): RequestContext | null {
    return this.contexts.get(digest);
  }
}
