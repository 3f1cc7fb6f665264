/**
 * compactConversation activity (seed §2.7): one model call that writes the summary of a
 * conversation's window. Like `callModel` it gets references and materialises the request on the
 * worker; as Claude Code sends it, the tools stay attached (so the cached prefix still matches)
 * and the last user turn gets the text-only summary instruction. A request too long for the model
 * comes back as data (the workflow leaves out the oldest rounds and asks again); other failures
 * are classified like callModel's.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { CompactConversationInput, CompactConversationResult } from '../common/activity-types';
import { type ApiMessage, type UserContentBlock, buildApiMessages, textOf } from '../common/messages';
import { type CallModelDeps, asPromptTooLong, classifyModelError, heartbeatingWhile, requestSetup, thinkingOf, toAssistantMessage } from './call-model';
import { buildModelRequest } from './request-params';
import { requestTools } from './tool-definitions';

/**
 * The text-only instruction appended to the last user turn of a compaction request. Tools stay
 * attached (as Claude Code sends them, so the prompt cache still matches); this forbids using them.
 */
export function compactInstruction(customInstructions?: string): string {
  return [
    'IMPORTANT: Respond with text only. Do not call any tools in this turn — tool calls will be rejected and waste the turn.',
    '',
    'Your task is to write a detailed summary of the conversation so far, so that the work can continue without it.',
    'First think it through inside <analysis> tags, going through the conversation chronologically. Then write the summary inside <summary> tags with these sections:',
    '1. Primary request and intent: everything the user asked for, in detail.',
    '2. Key technical concepts: technologies, frameworks and ideas that came up.',
    '3. Files and code sections: files read, changed or created, with why they matter and the important snippets.',
    "4. Errors and fixes: what went wrong and how it was fixed, including the user's feedback.",
    '5. Problem solving: problems solved and ongoing troubleshooting.',
    '6. All user messages: every user message that is not a tool result (quote security-relevant instructions verbatim).',
    '7. Pending tasks: what was asked and is not done yet.',
    '8. Current work: precisely what was being worked on right before this summary, with file names and snippets.',
    '9. Optional next step: the next step, only if it follows directly from the most recent request; quote that request.',
    ...(customInstructions?.trim() ? ['', `Additional instructions from the user: ${customInstructions.trim()}`] : []),
  ].join('\n');
}

/** Stands in for the rounds a too-long compaction request leaves out (the window must open with a user turn). */
export const OMITTED_ROUNDS_NOTE = '[The oldest part of this conversation was left out to fit the context window.]';

/** The compaction request's messages: the window (minus `skip`), with the instruction last. */
export function buildCompactMessages(window: ApiMessage[], instruction: string): ApiMessage[] {
  const messages =
    window[0]?.role === 'assistant' ? [{ role: 'user' as const, content: [{ type: 'text' as const, text: OMITTED_ROUNDS_NOTE }] }, ...window] : [...window];
  const last = messages[messages.length - 1];
  const text: UserContentBlock = { type: 'text', text: instruction };
  if (last?.role === 'user' && Array.isArray(last.content)) {
    messages[messages.length - 1] = { role: 'user', content: [...(last.content as UserContentBlock[]), text] };
  } else {
    messages.push({ role: 'user', content: [text] });
  }
  return messages;
}

export function createCompactConversation(deps: CallModelDeps) {
  return async function compactConversation(input: CompactConversationInput): Promise<CompactConversationResult> {
    const context = Context.current();
    if (!deps.anthropic) {
      throw classifyModelError(new Error('No Anthropic API key: set ANTHROPIC_API_KEY in the worker environment.'), 0, false);
    }
    const startedAt = Date.now();
    const setup = await requestSetup(deps, input);
    // A cache miss asks the workflow: heartbeat while that waits (see heartbeatingWhile).
    const [messages, requestContext] = await heartbeatingWhile(
      context,
      Promise.all([
        deps.transcriptCache.materialize(input.conversationId, input.transcript, deps.transcriptSource),
        deps.transcriptCache.context(input.conversationId, input.context.digest, deps.transcriptSource),
      ]),
      () => ({ outputChars: 0 }),
    );
    const window = buildApiMessages(messages.slice(input.transcript.from + input.skip), requestContext.userContext, thinkingOf(setup.model));
    try {
      // Built as every model call is (activities/request-params.ts): same model, thinking and cache breakpoints.
      const { params, betas } = buildModelRequest(
        input,
        {
          system: requestContext.system,
          messages: buildCompactMessages(window, compactInstruction(input.customInstructions)),
          tools: requestTools(requestContext),
        },
        setup.model,
        setup.options,
      );
      const stream = deps.anthropic.messages.stream(params, {
        signal: context.cancellationSignal,
        ...(betas.length ? { headers: { 'anthropic-beta': betas.join(',') } } : {}),
      });
      let outputChars = 0;
      stream.on('text', (delta) => {
        outputChars += delta.length;
        context.heartbeat({ outputChars });
      });
      const final = toAssistantMessage(await stream.finalMessage());
      return {
        type: 'summary',
        text: textOf({ type: 'assistant', uuid: '', message: final }),
        usage: final.usage,
        model: final.model,
        durationMs: Date.now() - startedAt,
      };
    } catch (error) {
      if (context.cancellationSignal.aborted || error instanceof Anthropic.APIUserAbortError) throw new CancelledFailure('Compaction cancelled');
      const tooLong = asPromptTooLong(error);
      if (tooLong) return { type: 'prompt_too_long', errorMessage: tooLong.errorMessage, durationMs: Date.now() - startedAt };
      throw classifyModelError(error, 0, false);
    }
  };
}
