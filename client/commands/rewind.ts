/**
 * `durable-agent rewind <id> --to <n> [--code | --conversation] [--json]` and `durable-agent
 * checkpoints <id> [--json]` (issue 31, Claude Code's `/rewind` with Bash edits included): the
 * prompts a rewind can go back to, and the rewind itself — the files from the checkpoint taken
 * just before prompt n and/or the conversation cut to before it (default both).
 */
import path from 'node:path';
import { REWIND_MODES, type RewindMode, type RewindOutcome, formatRewindPoints } from '../../common/checkpoints';
import type { ConversationClient } from '../api';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { UsageError } from '../usage-error';
import { resolveConversationId } from './list';
import { cliCommand } from '../invocation';

export async function rewindCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const toText = values.to as string | undefined;
  if (toText === undefined) throw new UsageError(`rewind: --to <n> is required (the prompt to go back to; \`${cliCommand('checkpoints <id>')}\` lists them).`);
  if (!/^[0-9]+$/.test(toText) || Number(toText) < 1) throw new UsageError(`rewind: --to must be a prompt number (1 or more), got "${toText}".`);
  if (values.code && values.conversation) throw new UsageError('rewind: --code and --conversation exclude each other (neither: both are restored).');
  const mode: RewindMode = values.code ? 'code' : values.conversation ? 'conversation' : 'both';
  return withConnection(async (api) => {
    const outcome = await api.rewind(await resolveConversationId(api, positionals[0]), { to: Number(toText), mode });
    io.out(values.json ? JSON.stringify(outcome) : formatRewindOutcome(outcome));
    return 0;
  });
}

export async function checkpointsCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  return withConnection(async (api) => {
    const points = await api.checkpoints(await resolveConversationId(api, positionals[0]));
    io.out(values.json ? JSON.stringify(points) : formatRewindPoints(points));
    return 0;
  });
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

/**
 * `/rewind [n] [both|code|conversation]` in chat: lists the prompts, asks which and what to
 * restore (when not given), rewinds, and returns the rewound prompt's text to edit and send
 * again (undefined: cancelled, or only the files went back).
 */
export async function rewindInChat(
  line: string,
  io: {
    api: ConversationClient;
    conversationId: string;
    print(text: string): void;
    question(prompt: string): Promise<string>;
    /** Called once the rewind is done (before its outcome is printed). */
    rewound?(outcome: RewindOutcome): void;
  },
): Promise<string | undefined> {
  const [, nText, modeText] = line.trim().split(/\s+/);
  const points = await io.api.checkpoints(io.conversationId);
  if (points.length === 0) {
    io.print('No prompts to rewind to yet.');
    return undefined;
  }
  let n = nText === undefined ? undefined : Number(nText);
  if (n === undefined) {
    io.print(formatRewindPoints(points));
    const answer = (await io.question(`Rewind to just before which prompt? (1–${points.length}, Enter cancels) `)).trim();
    if (answer === '') return undefined;
    n = Number(answer);
  }
  if (!Number.isInteger(n) || n < 1 || n > points.length) {
    io.print(`No prompt ${nText ?? n}: choose 1–${points.length} (/rewind lists them).`);
    return undefined;
  }
  let mode = modeText as RewindMode | undefined;
  if (mode === undefined) {
    const canCode = points[n - 1].checkpointId !== undefined;
    const answer = (
      await io.question(
        canCode
          ? 'Restore [b]oth code and conversation, [c]ode only, c[o]nversation only? (Enter: both) '
          : 'No file checkpoint for that prompt: restore the conversation? [y/N] ',
      )
    )
      .trim()
      .toLowerCase();
    mode = canCode
      ? ({ '': 'both', b: 'both', c: 'code', o: 'conversation' } as Record<string, RewindMode>)[answer]
      : answer === 'y'
        ? 'conversation'
        : undefined;
    if (mode === undefined) return undefined;
  }
  if (!REWIND_MODES.includes(mode)) {
    io.print(`/rewind: what to restore is one of ${REWIND_MODES.join(', ')}.`);
    return undefined;
  }
  const outcome = await io.api.rewind(io.conversationId, { to: n, mode });
  io.rewound?.(outcome);
  io.print(formatRewindOutcome({ ...outcome, prompt: outcome.mode === 'code' ? outcome.prompt : '(below, to edit and send again)' }));
  return outcome.mode === 'code' ? undefined : outcome.prompt;
}

/**
 * `durable-agent fork <id> [--at <n>] [--cwd <dir>] [--id <new id>] [--json] [prompt]`: a new
 * conversation from the transcript before prompt n (default: now) in its own copy of the
 * workspace at that checkpoint (a git repository of its own when the parent's is one), linked to
 * its parent; the parent is unchanged.
 */
export async function forkCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const atText = values.at as string | undefined;
  if (atText !== undefined && (!/^[0-9]+$/.test(atText) || Number(atText) < 1))
    throw new UsageError(`fork: --at must be a prompt number (1 or more), got "${atText}".`);
  const [shortId, ...words] = positionals;
  const prompt = words.join(' ').trim() || undefined;
  return withConnection(async (api, taskQueue) => {
    const parent = await resolveConversationId(api, shortId);
    const forked = await api.fork(
      parent,
      { ...(atText !== undefined && { at: Number(atText) }), ...(typeof values.cwd === 'string' && { cwd: path.resolve(values.cwd) }) },
      { taskQueue, id: values.id as string | undefined, prompt },
    );
    if (values.json) io.out(JSON.stringify({ conversationId: forked.conversationId, ...forked.fork }));
    else {
      io.out(forked.conversationId);
      io.err(
        `Forked ${parent}${forked.fork.at ? ` at prompt ${forked.fork.at}` : ''} into ${forked.fork.cwd} (${forked.fork.files} files${forked.fork.git ? ', a git repository of its own' : ''}). ` +
          `Continue it with: ${cliCommand(`chat ${forked.conversationId}`)}`,
      );
    }
    return 0;
  });
}
