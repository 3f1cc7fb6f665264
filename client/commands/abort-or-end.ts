/** `durable-agent abort <id>` (interrupt the running query) and `end <id>` (end the conversation after it). */
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { resolveConversationId } from './list';

export async function abortOrEndCommand({ positionals }: CommandInput, io: Io, command: 'abort' | 'end'): Promise<number> {
  return withConnection(async (api) => {
    const conversationId = await resolveConversationId(api, positionals[0]);
    await (command === 'abort' ? api.abort(conversationId) : api.end(conversationId));
    io.out(command === 'abort' ? `abort sent to ${conversationId}` : `end sent to ${conversationId}`);
    return 0;
  });
}
