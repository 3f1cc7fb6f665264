/**
 * `durable-agent rewind <id> --to <n> [--code | --conversation] [--json]` and `durable-agent
 * checkpoints <id> [--json]` (issue 31, Claude Code's `/rewind` with Bash edits included): the
 * prompts a rewind can go back to, and the rewind itself — the files from the checkpoint taken
 * just before prompt n and/or the conversation cut to before it (default both).
 */
import type { RewindMode, RewindOutcome, RewindPointListing } from '../../common/checkpoints';
import { type Io, parse } from '../command-line';
import { withConnection } from '../connect';
import { UsageError } from '../usage-error';
import { resolveConversationId } from './list';

export async function rewindCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(
    args,
    { to: { type: 'string' }, code: { type: 'boolean' }, conversation: { type: 'boolean' }, json: { type: 'boolean' } },
    1,
    'rewind',
  );
  const toText = values.to as string | undefined;
  if (toText === undefined) throw new UsageError('rewind: --to <n> is required (the prompt to go back to; `durable-agent checkpoints <id>` lists them).');
  if (!/^[0-9]+$/.test(toText) || Number(toText) < 1) throw new UsageError(`rewind: --to must be a prompt number (1 or more), got "${toText}".`);
  if (values.code && values.conversation) throw new UsageError('rewind: --code and --conversation exclude each other (neither: both are restored).');
  const mode: RewindMode = values.code ? 'code' : values.conversation ? 'conversation' : 'both';
  return withConnection(async (api) => {
    const outcome = await api.rewind(await resolveConversationId(api, positionals[0]), { to: Number(toText), mode });
    io.out(values.json ? JSON.stringify(outcome) : formatRewindOutcome(outcome));
    return 0;
  });
}

export async function checkpointsCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, 1, 'checkpoints');
  return withConnection(async (api) => {
    const points = await api.checkpoints(await resolveConversationId(api, positionals[0]));
    io.out(values.json ? JSON.stringify(points) : formatRewindPoints(points));
    return 0;
  });
}

/** The rewind points as a list: number, time, first line, files changed since. */
export function formatRewindPoints(points: readonly RewindPointListing[]): string {
  if (points.length === 0) return 'No prompts yet.';
  return points
    .map((point) => {
      const time = new Date(point.at).toISOString().replace('T', ' ').slice(0, 19);
      const line = point.text.split('\n', 1)[0];
      const files = !point.checkpointId
        ? 'no checkpoint: conversation only'
        : point.filesChangedSince === undefined
          ? 'files changed since: unknown'
          : point.filesChangedSince === 0
            ? 'no files changed since'
            : `${point.filesChangedSince} file${point.filesChangedSince === 1 ? '' : 's'} changed since${point.changedPaths?.length ? ` (${point.changedPaths.slice(0, 5).join(', ')}${point.filesChangedSince > 5 ? ', …' : ''})` : ''}`;
      return `${String(point.n).padStart(3)}  ${time}  ${line.length > 60 ? `${line.slice(0, 59)}…` : line}  — ${files}`;
    })
    .join('\n');
}

export function formatRewindOutcome(outcome: RewindOutcome): string {
  const lines = [`Rewound to just before prompt ${outcome.to}.`];
  if (outcome.mode !== 'conversation') {
    lines.push(
      `Files: ${outcome.filesRestored ?? 0} written, ${outcome.filesRemoved ?? 0} removed${outcome.gitState ? '; git HEAD, refs and index put back' : ''}.`,
      `The workspace as it was before this rewind is checkpoint ${outcome.undoCheckpointId}.`,
    );
  }
  if (outcome.mode !== 'code') {
    lines.push(`Conversation: ${outcome.messagesRemoved ?? 0} messages taken out${outcome.uncompacted ? ' (it is back from before a compaction)' : ''}.`);
    lines.push(`The prompt was:\n${outcome.prompt}`);
  }
  for (const warning of outcome.warnings) lines.push(`Warning: ${warning}`);
  return lines.join('\n');
}
