/**
 * `durable-agent start [options] <prompt>`: start a conversation and print its id; `--resume <id>`
 * continues that one's transcript (the prompt may then wait for `send`); `--follow` prints its
 * progress until the first result.
 */
import { conversationIdProblem } from '../api';
import { type CommandInput, type Io, configFrom, promptFrom, withCheckedModels } from '../command-line';
import { warnIfNoWorker, withConnection } from '../connect';
import { follow } from '../follow';
import { UsageError } from '../usage-error';
import { sessionLimitsFrom } from './ask';
import { resumeFrom } from '../continue-conversation';
import { checkHeadlessWorkspace } from '../workspace-trust';

export async function startCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const resumeId = values.resume as string | undefined;
  if (!resumeId && positionals.length === 0) throw new UsageError("start: missing required argument 'prompt' (or give --resume <id>).");
  // With --resume the prompt may wait for `send` (claude --resume takes none either).
  const prompt = resumeId && positionals.length === 0 ? undefined : promptFrom(positionals, 'start');
  if (!prompt && values.follow) throw new UsageError('start: --follow needs a prompt.');
  const id = values.id as string | undefined;
  const idProblem = id === undefined ? undefined : conversationIdProblem(id);
  if (idProblem) throw new UsageError(`--id: ${idProblem}.`);
  const config = await checkHeadlessWorkspace(await withCheckedModels({ ...configFrom(values, false), ...sessionLimitsFrom(values) }), values, io.err);
  return withConnection(async (api, taskQueue) => {
    const resume = resumeId ? await resumeFrom(api, resumeId) : undefined;
    const { conversationId, inputUuid } = await api.start({ id, prompt, config, taskQueue, resume });
    io.out(conversationId);
    await warnIfNoWorker(api, taskQueue, io);
    if (!values.follow) return 0;
    const result = await follow(api, conversationId, inputUuid!, io);
    return result.is_error ? 1 : 0;
  });
}
