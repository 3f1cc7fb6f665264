/** `durable-agent approve <id> <toolUseId> [--always]` and `deny <id> <toolUseId> [message]`: answer a tool call waiting for permission. */
import { type Io, parse } from '../command-line';
import { connect } from '../connect';
import { sanitizeForTerminal } from '../format';
import { resolveConversationId } from './list';
import { decide } from './permissions';

export async function approveOrDenyCommand(args: string[], io: Io, command: 'approve' | 'deny'): Promise<number> {
  const { values, positionals } = parse(args, command === 'approve' ? { always: { type: 'boolean' } } : {}, command === 'approve' ? 2 : [2, Infinity], command);
  const [shortId, toolUseId, ...words] = positionals;
  const { api, close } = await connect();
  try {
    const conversationId = await resolveConversationId(api, shortId);
    const { line } = await decide(api, conversationId, toolUseId, command === 'approve' ? 'allow' : 'deny', {
      always: values.always === true,
      message: words.join(' '),
    });
    io.out(sanitizeForTerminal(line));
    return 0;
  } finally {
    await close();
  }
}
