/**
 * `durable-agent send [--follow] <id> <prompt>`: a follow-up to a conversation (a prompt starting
 * with / is a slash command); `--follow` prints from this input on until its result.
 */
import { type CommandInput, type Io, promptFrom } from '../command-line';
import { withConnection } from '../connect';
import { follow } from '../follow';
import { resolveConversationId } from './list';

export async function sendCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const [shortId, ...words] = positionals;
  const prompt = promptFrom(words, 'send');
  return withConnection(async (api) => {
    const conversationId = await resolveConversationId(api, shortId);
    // Signal first: a signal needs no worker, a query does (querying first lost the message when
    // no worker ran). --follow then prints from this input's own user_input event.
    const inputUuid = await api.send(conversationId, prompt);
    io.out(`sent to ${conversationId} (input ${inputUuid})`);
    if (!values.follow) return 0;
    const result = await follow(api, conversationId, inputUuid, io, { fromInput: true });
    return result.is_error ? 1 : 0;
  });
}
