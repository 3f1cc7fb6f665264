/**
 * `durable-agent approve <id> <toolUseId> [--always]` and `deny <id> <toolUseId> [message]`: answer a
 * tool call waiting for permission, and show what was answered — the call whole, as `status`
 * showed it (a command never cut, invisible characters shown).
 */
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { sanitizeForTerminal, terminalWidth } from '../format';
import { approvalView } from '../tool-line';
import { resolveConversationId } from './list';
import { decide, withWholeInput } from './permissions';

export async function approveOrDenyCommand({ values, positionals }: CommandInput, io: Io, command: 'approve' | 'deny'): Promise<number> {
  const [shortId, toolUseId, ...words] = positionals;
  return withConnection(async (api) => {
    const conversationId = await resolveConversationId(api, shortId);
    // The call as it waits (a request decided already, or unknown, is answered by the update below).
    const status = await api.status(conversationId).catch(() => undefined);
    const waiting = status?.pendingPermissions?.find((request) => request.toolUseId === toolUseId);
    const request = waiting && (await withWholeInput(api, conversationId, waiting));
    const { line } = await decide(api, conversationId, toolUseId, command === 'approve' ? 'allow' : 'deny', {
      always: values.always === true,
      message: words.join(' '),
    });
    const view = request && approvalView(request.toolName, request.input, terminalWidth());
    io.out(sanitizeForTerminal([line, ...(view ? [`  ${view.call}`, ...view.lines] : [])].join('\n')));
    return 0;
  });
}
