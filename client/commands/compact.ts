/** `durable-agent compact [--json] <id> [instructions]`: summarize the conversation so far (after the running query); exit 1 when nothing was compacted. */
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { formatCompactionOutcome } from '../format';
import { resolveConversationId } from './list';

export async function compactCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const [shortId, ...words] = positionals;
  return withConnection(async (api) => {
    const outcome = await api.compact(await resolveConversationId(api, shortId), words.join(' '));
    io.out(values.json ? JSON.stringify(outcome) : formatCompactionOutcome(outcome));
    return outcome.compacted ? 0 : 1;
  });
}
