/**
 * seed §2.10 processUserInput / shouldQuery: what happens to an input before the model sees it.
 * Plain text goes to a query unchanged. A slash command is parsed (`slash-commands.ts`): a local
 * command runs here and answers without a model call — its record goes to the transcript (never
 * to the model), its output to the events feed and a result message, so `send --follow`, `ask`
 * and `start --follow` print it — and a custom command becomes the prompt of a query.
 */
import { uuid4 } from '@temporalio/workflow';
import { resolveModelName } from '../../common/models';
import type { UserMessage } from '../../common/messages';
import type { PendingInput } from '../definitions';
import type { ConversationSession } from '../session';
import { runLoopCommand } from '../background/loop-command';
import { type RewindMode, formatRewindPoints } from '../../common/checkpoints';
import { rewindRequestProblem, rewindSummary } from '../session/rewinds';
import { skillGrant, skillPrompt } from '../../common/skills';
import {
  costText,
  expandCommandArguments,
  helpText,
  localCommandRecord,
  parseSlashCommand,
  resolveSlashCommand,
  statusText,
  tasksText,
  unknownCommandText,
} from './slash-commands';

/**
 * Returns the input for the query to run, or undefined when the input was answered locally
 * (shouldQuery = false).
 */
export async function processUserInput(session: ConversationSession, input: PendingInput): Promise<PendingInput | undefined> {
  if (input.command) return input; // already expanded (carried across continue-as-new)
  // A subagent's prompt comes from the model, not a person: never a command.
  const parsed = session.subagent ? undefined : parseSlashCommand(input.prompt);
  if (!parsed) return input;
  const commands = session.sessionContext?.commands ?? [];
  // issue 21 §4: /loop.
  if (parsed.name.toLowerCase() === 'loop') {
    const loop = await runLoopCommand(loopHost(session), input, parsed.args);
    if ('query' in loop) return loop.query;
    answerLocally(session, input, parsed.name, parsed.args, loop.answer, loop.isError);
    return undefined;
  }
  const decision = resolveSlashCommand(parsed, commands);
  // Issue 33 §3: `/<skill-name>`, those only a person may invoke too; a skill wins over a custom
  // command of its name (Claude Code's precedence), never over a built-in one.
  const skill = decision.type === 'local' ? undefined : session.parts.skills.find(parsed.name);
  if (skill) {
    const read = await session.parts.skills.body(skill);
    if ('problem' in read) {
      answerLocally(session, input, parsed.name, parsed.args, read.problem, true);
      return undefined;
    }
    return {
      prompt: skillPrompt(skill, expandCommandArguments(read.body, parsed.args)),
      uuid: input.uuid,
      model: skill.model,
      command: { name: skill.name, args: parsed.args },
      grant: skillGrant(skill),
    };
  }
  switch (decision.type) {
    case 'prompt':
      return {
        prompt: decision.prompt,
        uuid: input.uuid,
        model: decision.command.model,
        command: { name: decision.command.name, args: decision.args },
        ...(decision.command.allowedTools?.length
          ? { grant: { allowedTools: decision.command.allowedTools, ...(decision.command.scope === 'project' ? { project: true } : {}) } }
          : {}),
      };
    case 'unknown':
      answerLocally(session, input, parsed.name, parsed.args, unknownCommandText(parsed.name, commands, session.sessionContext?.skills), true);
      return undefined;
    case 'local':
      break;
  }
  const { command, args } = decision;
  let output: string;
  let isError = false;
  switch (command) {
    case 'help':
      output = helpText(commands, session.sessionContext?.skills);
      break;
    case 'cost': {
      const { totalCostUsd, usage, queryCount } = session.totals;
      output = costText(totalCostUsd, usage, queryCount);
      break;
    }
    case 'status': {
      const status = session.status();
      output = statusText({
        conversationId: status.conversationId,
        model: session.config.model,
        cwd: session.sessionContext?.cwd ?? session.config.cwd,
        queryCount: status.queryCount,
        messageCount: status.messageCount,
        context: status.context,
        totalCostUsd: status.totalCostUsd,
        claudeMdFiles: session.sessionContext?.claudeMdFiles,
        customCommands: commands.length,
        mcpServers: status.mcpServers,
      });
      break;
    }
    case 'model': {
      if (!args) {
        output = `Model: ${session.config.model}. Switch with /model <name>.`;
        break;
      }
      const resolved = resolveModelName(args);
      if ('problem' in resolved) {
        output = `${resolved.problem} The model stays ${session.config.model}.`;
        isError = true;
      } else {
        session.selectModel(resolved.model);
        output = `Model set to ${resolved.model} for the next queries.`;
      }
      break;
    }
    case 'tasks': {
      const status = session.status();
      output = tasksText({ taskLines: session.parts.scheduled.tasks.lines(), wakeups: status.wakeups, cronJobs: status.cronJobs });
      break;
    }
    case 'clear': {
      // CLAUDE.md, git status and custom commands are read again before the next input.
      await session.parts.hooks.sessionEnd('clear'); // issue 22: SessionEnd(clear) now, SessionStart(clear) before the next input
      const removed = session.clearConversation();
      output = `Conversation cleared (${removed} message${removed === 1 ? '' : 's'} removed). The next prompt starts with a fresh context.`;
      break;
    }
    case 'mcp':
      // Issue 22: the config read again (an approval since) and the servers listed again.
      output = await session.parts.mcp.command();
      break;
    case 'rewind': {
      // Issue 31: `/rewind` lists the prompts; `/rewind n [mode]` rewinds (chat asks which and what, then sends the prompt back to edit).
      const [to, mode] = args.split(/\s+/).filter(Boolean);
      if (to === undefined) {
        output = `${formatRewindPoints(await session.rewinds.listing())}\n\nRewind with /rewind <n> [both|code|conversation].`;
        break;
      }
      const request = { to: Number(to), mode: (mode ?? 'both') as RewindMode };
      const problem = rewindRequestProblem(request, session.rewinds.points);
      if (problem) {
        output = problem;
        isError = true;
        break;
      }
      output = rewindSummary(await session.rewinds.rewind(request));
      break;
    }
    case 'compact': {
      // The manual compaction of the `compact` update (seed §2.7), with the user's instructions.
      const outcome = await session.compactNow(args || undefined);
      output = outcome.compacted
        ? `Compacted: ${outcome.preTokens} → ${outcome.postTokens ?? '?'} tokens${outcome.messagesSummarized === undefined ? '' : ` (${outcome.messagesSummarized} messages summarized)`}.`
        : `Not compacted: ${outcome.error ?? 'no reason given'}`;
      isError = !outcome.compacted;
      break;
    }
  }
  answerLocally(session, input, command, args, output, isError);
  return undefined;
}

/** A local command's answer: its record in the transcript, the feed, and a result message. */
function answerLocally(session: ConversationSession, input: PendingInput, name: string, args: string, output: string, isError: boolean): void {
  const record: UserMessage = {
    type: 'user',
    uuid: uuid4(),
    isMeta: true,
    command: { name, args, kind: 'local' },
    message: { role: 'user', content: localCommandRecord(name, args, output) },
  };
  session.answerLocally(input, record, output, isError);
}

/** What /loop needs from the session. */
function loopHost(session: ConversationSession) {
  return {
    cron: session.parts.scheduled.cron,
    wakeupMinimumSeconds: session.config.wakeupMinimumSeconds,
    info: (text: string) => session.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: text }),
  };
}
