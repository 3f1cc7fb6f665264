/** `start --follow` and `send --follow`: print a query's progress until its result. */
import type { ResultMessage } from '../common/result';
import type { ConversationEvent } from '../workflows/definitions';
import type { ConversationClient } from './api';
import type { Io } from './command-line';
import { formatContextWarning, formatEvent, sanitizeForTerminal } from './format';
import { RESTORE_AND_CLEAR, SAVE_CURSOR } from './live-printer';
import { LiveView } from './live-view';

/**
 * Prints the query's events (compaction boundaries and notices among them) until its result,
 * then, like Claude Code under its prompt, the context warning once if the context is running out.
 */
export async function follow(
  api: ConversationClient,
  conversationId: string,
  inputUuid: string,
  io: Io,
  options: { fromInput?: boolean } = {},
): Promise<ResultMessage> {
  // With fromInput, events before this input's user_input event belong to earlier queries.
  let printing = options.fromInput !== true;
  // Each call's input, so its result is told in Claude Code's words (`Read 11 lines`).
  const calls: Parameters<typeof formatEvent>[1] = new Map();
  const printEvent = (event: ConversationEvent, textShown = false) => {
    if (!printing && event.message.type === 'user_input' && event.message.uuid === inputUuid) printing = true;
    if (!printing) return;
    // Text that streamed already: only the message's tool calls are left to print.
    const shown =
      textShown && event.message.type === 'assistant'
        ? {
            ...event,
            message: {
              ...event.message,
              message: { ...event.message.message, content: event.message.message.content.filter((block) => block.type !== 'text') },
            },
          }
        : event;
    const line = formatEvent(shown as ConversationEvent, calls);
    if (line) io.out(sanitizeForTerminal(line));
  };
  let result: ResultMessage;
  if (io.tty) {
    // On a terminal the model's text streams as it is written (issue 19, item 6), as in chat.
    const tty = io.tty;
    const view = new LiveView();
    let streamed = '';
    result = await api.waitForResult(conversationId, inputUuid, {
      onLive: (entry) => {
        for (const op of view.apply(entry)) {
          if (op.op === 'event') printEvent(op.event, op.textShown);
          else if (!printing) continue;
          else if (op.op === 'text') {
            if (streamed === '') tty.write(SAVE_CURSOR);
            streamed += op.text;
            tty.write(sanitizeForTerminal(op.text));
          } else if (op.op === 'retract') {
            tty.write(RESTORE_AND_CLEAR);
            streamed = '';
          } else if (op.op === 'text_end') {
            if (streamed !== '') tty.write('\n');
            streamed = '';
          }
        }
      },
    });
  } else {
    result = await api.waitForResult(conversationId, inputUuid, { onEvent: (event: ConversationEvent) => printEvent(event) });
  }
  // Best effort: a one-shot conversation may have closed already and answer no queries.
  const warning = await api.status(conversationId).then(formatContextWarning, () => undefined);
  if (warning) io.out(sanitizeForTerminal(warning));
  return result;
}
