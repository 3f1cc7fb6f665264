/**
 * `durable-agent chat [id]` (issue 10): an interactive terminal session on a new or existing
 * conversation. The answer streams from the live channel; each tool call is one line with its
 * result summary; a status line (model, tokens, cost) follows each result. Lines go to the
 * conversation as input (slash commands included: the conversation interprets them). Ctrl-C
 * aborts the running query, a second Ctrl-C leaves; Ctrl-D leaves. Leaving never ends the
 * conversation: `durable-agent chat <id>` rejoins it from any terminal.
 */
import readline from 'node:readline';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { ConversationConfigInput } from '../../common/config';
import type { TranscriptMessage } from '../../common/messages';
import type { ConversationClient } from '../api';
import { type ChatPermissionIo, ChatPermissionPrompter } from '../chat-permissions';
import { ChatMcpApprovalPrompter } from '../chat-mcp-approval';
import { formatEvent, sanitizeForTerminal } from '../format';
import { NoLiveStreamError, readLive } from '../live';
import { RESTORE_AND_CLEAR, SAVE_CURSOR } from '../live-printer';
import { LiveView, type ViewOp } from '../live-view';
import { argumentFromSummary, toolCallLine, toolResultLine } from '../tool-line';
import { formatUsd } from '../../common/money';
import { type CommandInput, configFrom } from '../command-line';
import { withConnection } from '../connect';
import {
  type ForkedSession,
  type ResumeInput,
  checkContinueFlags,
  continuedConversation,
  describeFork,
  forkIgnoredOptionsLine,
  forkSession,
  resumeFrom,
} from '../continue-conversation';
import { UsageError } from '../usage-error';
import { resolveConversationId } from './list';
import { describeTaskNotification } from '../task-notification';
import { checkChatWorkspace } from '../workspace-trust';
import { rewindInChat } from './rewind';

export interface ChatOptions {
  api: ConversationClient;
  taskQueue: string;
  /** Rejoin this conversation; a new one is started when absent. */
  conversationId?: string;
  config: ConversationConfigInput;
  /** The first prompt of a new conversation (`durable-agent "fix the bug"`), sent once the chat is ready. */
  initialPrompt?: string;
  /** A new conversation continues this transcript (--continue / --resume of an ended one). */
  resume?: { fromConversationId: string; messages: TranscriptMessage[] };
  /** `conversationId` is a fork just made (--fork-session): said so instead of "rejoined". */
  forked?: ForkedSession;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

const DIM = '\u001b[2m';
/** Lines arriving within this long of each other are one prompt (a paste). */
const PASTE_WINDOW_MS = 30;
/** How long sending a prompt may take before chat says it was not sent. */
const SEND_DEADLINE_MS = 5_000;
/** How often a lost live view tries again. */
const RECONNECT_MS = 1_000;
const RESET = '\u001b[0m';
/** How long a /rewind waits for its line in the feed before it offers the prompt again. */
const REWIND_FEED_WAIT_MS = 2_000;

/**
 * A rewound prompt as the one-line editor takes it back: lines joined by a space, tabs as spaces,
 * other control characters (an escape would be read as a key) left out.
 */
export function promptForInputLine(prompt: string): string {
  return prompt
    .replace(/\r?\n/g, ' ')
    .replace(/\t/g, ' ')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

export async function chatCommand(options: ChatOptions): Promise<number> {
  const { api } = options;
  const output = options.output ?? process.stdout;
  // A running tool's progress line (issue 19, item 6) stands on its own line until anything else
  // is written: then it is erased (cursor back to that line's start) and redrawn on the next update.
  let progressShown = false;
  const clearProgress = () => {
    if (!progressShown) return;
    output.write('\r\u001b[2K');
    progressShown = false;
  };
  const write = (text: string) => {
    clearProgress();
    output.write(text);
  };
  let conversationId = options.conversationId;
  let busy = false;
  let waitingOnRejoin = false;
  if (conversationId) {
    const status = await api.status(conversationId); // a clear error for an unknown or ended id
    if (status.ended) throw new Error(`Conversation "${conversationId}" has ended; start a new one with \`durable-agent chat\`.`);
    busy = status.phase !== 'awaiting_input' && status.phase !== 'idle';
    waitingOnRejoin = busy;
    if (options.forked) {
      write(`${DIM}conversation ${conversationId} (rejoin with: durable-agent chat ${conversationId})${RESET}\n`);
      write(`${DIM}${sanitizeForTerminal(describeFork(options.forked))}${RESET}\n`);
    } else write(`${DIM}rejoined ${conversationId} · ${status.currentModel} · ${status.queryCount} queries · ${formatUsd(status.totalCostUsd)}${RESET}\n`);
  } else {
    conversationId = (await api.start({ config: options.config, taskQueue: options.taskQueue, resume: options.resume, firstPrompt: options.initialPrompt }))
      .conversationId;
    write(`${DIM}conversation ${conversationId} (rejoin with: durable-agent chat ${conversationId})${RESET}\n`);
    if (options.resume) write(`${DIM}continuing ${options.resume.fromConversationId} (${options.resume.messages.length} messages)${RESET}\n`);
  }
  const id = conversationId;
  write(`${DIM}Enter sends · Ctrl-C aborts the running query (twice: leave) · Ctrl-D leaves, the conversation stays${RESET}\n`);

  const rl = readline.createInterface({ input: options.input ?? process.stdin, output, terminal: true, prompt: '> ' });
  // Lines typed before the chat is ready (it still connects to the live channel) are kept and
  // sent once it is: readline emits them at once, listener or not (issue 19, item 9).
  const early: string[] = [];
  const keepEarly = (line: string) => early.push(line);
  rl.on('line', keepEarly);
  if (options.initialPrompt && !options.conversationId) {
    write(`> ${sanitizeForTerminal(options.initialPrompt)}\n`);
    early.push(options.initialPrompt);
  }
  const leaving = new AbortController();
  const sentByMe = new Set<string>();
  let interrupts = 0;
  // The permission prompt: while it is open, a line typed is its answer, not a new prompt.
  let answering: ((line: string) => void) | undefined;
  // One question on the line at a time (a permission prompt and an MCP server's approval): the next waits its turn.
  let questionLine: Promise<unknown> = Promise.resolve();
  const oneAtATime =
    (ask: ChatPermissionIo['question']): ChatPermissionIo['question'] =>
    (prompt, signal) => {
      const turn = questionLine.then(() => (signal.aborted ? Promise.reject(new Error('not waiting any more')) : ask(prompt, signal)));
      questionLine = turn.catch(() => undefined);
      return turn;
    };
  const questions: ChatPermissionIo = {
    print: (line) => {
      newline();
      put(`${line}\n`);
      if (!busy && !answering) rl.prompt(); // e.g. a request that ended with an aborted query
    },
    question: oneAtATime(
      (prompt, signal) =>
        new Promise<string>((resolve, reject) => {
          const mine = (line: string) => {
            answering = undefined;
            rl.setPrompt('> ');
            atLineStart = true;
            resolve(line);
          };
          signal.addEventListener(
            'abort',
            () => {
              if (answering !== mine) return; // answered already
              answering = undefined;
              rl.setPrompt('> ');
              newline();
              reject(new Error('not waiting any more'));
            },
            { once: true },
          );
          answering = mine;
          newline();
          clearProgress(); // the question takes the progress line's place (drawn again once answered)
          rl.setPrompt(prompt);
          rl.prompt();
          atLineStart = false; // the cursor is after the question
        }),
    ),
  };
  const permissions = new ChatPermissionPrompter(api, id, questions, leaving.signal);
  // Issue 22: "Use the MCP server … from .mcp.json?" for project servers waiting for approval, once each.
  const mcpApprovals = new ChatMcpApprovalPrompter(api, id, questions, leaving.signal);

  // ---- the live channel, from now on ----
  let shown = ''; // streamed text of the attempt on screen
  /** Set while this terminal's /rewind runs: called when the feed's line for it arrives. */
  let rewindShown: (() => void) | undefined;
  let atLineStart = true;
  const put = (text: string) => {
    if (text === '') return;
    write(text);
    atLineStart = text.endsWith('\n');
  };
  const newline = () => {
    if (!atLineStart) put('\n');
  };
  const statusLine = async () => {
    const status = await api.status(id).catch(() => undefined);
    if (!status) return;
    const tokens = status.usage.input_tokens + status.usage.cache_read_input_tokens + status.usage.cache_creation_input_tokens;
    const background = (status.backgroundTasks ?? []).filter((task) => task.status === 'running').length;
    const backgroundPart = background > 0 ? ` · ${background} background` : '';
    put(
      `${DIM}[${status.currentModel} · ${tokens} in / ${status.usage.output_tokens} out tokens · context ${status.context.percentUsed.toFixed(0)}% · ${formatUsd(status.totalCostUsd)}${backgroundPart}]${RESET}\n`,
    );
  };
  const show = async (op: ViewOp) => {
    switch (op.op) {
      case 'text':
        if (shown === '') {
          newline();
          write(SAVE_CURSOR);
        }
        shown += op.text;
        put(sanitizeForTerminal(op.text));
        return;
      case 'retract':
        write(RESTORE_AND_CLEAR);
        shown = '';
        atLineStart = true;
        return;
      case 'text_end':
        shown = '';
        newline();
        return;
      case 'thinking':
        return;
      case 'tool':
        if (op.item.type === 'tool_end') {
          permissions.settled(op.item.toolUseId);
          newline();
          const call = toolCallLine(op.item.name, argumentFromSummary(op.item.name, toolSummaries.get(op.item.toolUseId) ?? ''));
          put(`${sanitizeForTerminal(`${call}\n${toolResultLine(op.item.summary, op.item.isError)}`)}\n`);
          running.delete(op.item.toolUseId);
          drawProgress();
        } else if (op.item.type === 'tool_start') {
          toolSummaries.set(op.item.toolUseId, op.item.summary);
          running.set(op.item.toolUseId, { name: op.item.name, startedAt: Date.now(), tail: '' });
          drawProgress();
        } else if (op.item.type === 'tool_progress') {
          const tool = running.get(op.item.toolUseId);
          if (tool) tool.tail = op.item.tail;
          drawProgress();
        }
        return;
      case 'event': {
        const message = op.event.message;
        if (message.type === 'user_input') {
          if (sentByMe.has(message.uuid)) return;
          busy = true;
          newline();
          // A background task's end (issue 21) is not a person's prompt: its summary line instead of its XML.
          const notification = describeTaskNotification(message.prompt);
          if (notification) put(`${DIM}${sanitizeForTerminal(notification)}${RESET}\n`);
          else put(`${sanitizeForTerminal(`> ${message.prompt}`)}  ${DIM}(from another terminal)${RESET}\n`);
          return;
        }
        if (message.type === 'assistant') {
          // Text streamed already; tool calls get their line when they finish.
          if (op.textShown) return;
          const text = message.message.content.flatMap((block) => (block.type === 'text' && block.text.trim() ? [block.text.trim()] : [])).join('\n\n');
          if (text) {
            newline();
            put(`${sanitizeForTerminal(text)}\n`);
          }
          return;
        }
        if (message.type === 'user') {
          // Tool results: the tool lines show them. A local slash command's output (/help, /cost,
          // /status, an unknown command) is this message's text: shown as the command printed it.
          if (message.command?.kind !== 'local') return;
          const line = formatEvent(op.event);
          if (line) {
            newline();
            put(`${sanitizeForTerminal(line)}\n`);
          }
          return;
        }
        if (message.type === 'result') {
          permissions.settled(); // nothing of the query waits any more
          running.clear(); // tools of an aborted query end without their own item
          clearProgress();
          newline();
          const line = formatEvent(op.event);
          if (line) put(`${DIM}${sanitizeForTerminal(line)}${RESET}\n`);
          await statusLine();
          busy = false;
          interrupts = 0;
          rl.prompt();
          return;
        }
        if (message.type === 'system' && message.content.includes('Waiting for permission:')) {
          permissions.check(); // the prompt below says it all
          return;
        }
        if (message.type === 'system' && rewindShown && /^Rewound to before prompt \d+ /.test(message.content)) {
          // This terminal's /rewind printed its outcome already: the feed's line would land on the offered prompt.
          rewindShown();
          return;
        }
        if (message.type === 'system' && /^MCP server ".*" \(project\) needs approval/.test(message.content)) {
          mcpApprovals.check(); // the question says it all
          return;
        }
        const line = formatEvent(op.event);
        if (line) {
          newline();
          put(`${sanitizeForTerminal(line)}\n`);
        }
        return;
      }
    }
  };
  const toolSummaries = new Map<string, string>();
  /** Tools started and not ended, for the progress line. */
  const running = new Map<string, { name: string; startedAt: number; tail: string }>();
  /** `● Bash(npm test) · running 12s · <last output line>`, dim, on its own line; redrawn as output comes. */
  const drawProgress = () => {
    clearProgress();
    if (running.size === 0 || !atLineStart || answering) return;
    const [toolUseId, tool] = [...running.entries()].at(-1)!;
    const call = toolCallLine(tool.name, argumentFromSummary(tool.name, toolSummaries.get(toolUseId) ?? ''));
    const last =
      sanitizeForTerminal(tool.tail)
        .split('\n')
        .filter((line) => line.trim() !== '')
        .at(-1) ?? '';
    const others = running.size > 1 ? ` (+${running.size - 1} more)` : '';
    const text = `${call}${others} · running ${Math.round((Date.now() - tool.startedAt) / 1000)}s${last ? ` · ${last.trim()}` : ''}`;
    const width = Math.max(20, ((output as NodeJS.WriteStream).columns ?? 100) - 1);
    output.write(`${DIM}${sanitizeForTerminal(text).slice(0, width)}${RESET}`);
    progressShown = true;
  };
  // The seconds count on while a tool runs without output.
  const ticker = setInterval(() => {
    if (running.size > 0 && progressShown) drawProgress();
  }, 1_000);
  ticker.unref();

  const fromOffset = await WorkflowStreamClient.create(api.client, id)
    .getOffset()
    .catch(() => 0);
  // The live view survives a server that goes away for a while: it says so once, keeps what is
  // typed (see `unsent`), and reads on from its offset when the server answers again (item 9).
  const reading = (async () => {
    const view = new LiveView();
    let offset = fromOffset;
    let lost = false;
    while (!leaving.signal.aborted) {
      try {
        for await (const entry of readLive(api.client, id, offset, leaving.signal)) {
          offset = entry.offset + 1;
          if (lost) {
            lost = false;
            newline();
            put(`${DIM}(live view back)${RESET}\n`);
            if (!busy && !answering) rl.prompt();
          }
          for (const op of view.apply(entry)) await show(op);
        }
        if (!leaving.signal.aborted) {
          newline();
          put(`${DIM}the conversation has ended${RESET}\n`);
          rl.close();
        }
        return;
      } catch (error) {
        if (leaving.signal.aborted) return;
        if (error instanceof NoLiveStreamError || error instanceof WorkflowNotFoundError) {
          newline();
          put(
            error instanceof NoLiveStreamError
              ? `${error.message} Use \`durable-agent send --follow\` for it.\n`
              : `The conversation is gone: ${error.message}\n`,
          );
          rl.close();
          return;
        }
        if (!lost) {
          lost = true;
          newline();
          put(
            `Lost the live view (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); reconnecting — what you type is kept. Ctrl-D leaves.\n`,
          );
          if (!busy && !answering) rl.prompt();
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    }
  })();

  const left = new Promise<void>((resolve) => {
    rl.on('close', () => resolve());
  });
  // Lines that arrive together are one prompt: a multi-line paste reaches readline as one chunk
  // and becomes several 'line' events at once (a person types Enter far slower than this).
  // Prompts are signalled one after another, so they reach the conversation in the order typed.
  let pasted: string[] = [];
  let pasteTimer: NodeJS.Timeout | undefined;
  let sending: Promise<unknown> = Promise.resolve();
  // A prompt the server did not take: kept, and sent again on an empty Enter (issue 19, item 9).
  let unsent: string | undefined;
  // The prompt a /rewind put back on the input line: its lines joined there (readline edits one
  // line); sent unedited, it goes as it was first typed, its lines kept.
  let offered: { line: string; prompt: string } | undefined;
  const submit = () => {
    pasteTimer = undefined;
    let prompt = pasted.join('\n').trim();
    pasted = [];
    if (offered && prompt === offered.line) prompt = offered.prompt;
    offered = undefined;
    if (!prompt && unsent !== undefined) prompt = unsent;
    if (!prompt) {
      if (!busy) rl.prompt();
      return;
    }
    if (/^\/rewind(\s|$)/.test(prompt)) {
      // Issue 31: Claude Code's /rewind is the terminal's: it asks here, and the rewound prompt comes back to edit.
      busy = true;
      // The rewind's line in the feed arrives about when the update returns: it is waited for (a
      // moment at most) and not shown, so it does not land after the prompt offered on the input line.
      const feedLine = new Promise<void>((resolve) => (rewindShown = resolve));
      let rewoundHere = false;
      sending = sending.then(() =>
        rewindInChat(prompt, {
          api,
          conversationId: id,
          print: questions.print,
          question: (text) => questions.question(text, leaving.signal),
          rewound: () => (rewoundHere = true),
        }).then(
          async (again) => {
            if (rewoundHere) await Promise.race([feedLine, new Promise((resolve) => setTimeout(resolve, REWIND_FEED_WAIT_MS))]);
            rewindShown = undefined;
            busy = false;
            rl.prompt();
            if (again) {
              const line = promptForInputLine(again);
              offered = { line, prompt: again };
              rl.write(line);
            }
          },
          (error: unknown) => {
            rewindShown = undefined;
            busy = false;
            questions.print(
              `✗ ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message.split('\n')[0]) : String(error)}`,
            );
          },
        ),
      );
      return;
    }
    busy = true;
    interrupts = 0;
    sending = sending.then(() =>
      api.client.connection
        .withDeadline(Date.now() + SEND_DEADLINE_MS, () => api.send(id, prompt))
        .then(
          (uuid) => {
            if (unsent === prompt) unsent = undefined;
            sentByMe.add(uuid);
          },
          (error: unknown) => {
            unsent = prompt;
            newline();
            const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
            put(`✗ Not sent — the Temporal server did not take it (${why}). It is kept: press Enter to send it again.\n`);
            busy = false;
            rl.prompt();
          },
        ),
    );
  };
  rl.off('line', keepEarly);
  rl.on('line', (line) => {
    if (answering && pasted.length === 0) {
      answering(line);
      return;
    }
    pasted.push(line);
    if (pasteTimer) clearTimeout(pasteTimer);
    pasteTimer = setTimeout(submit, PASTE_WINDOW_MS);
  });
  rl.on('SIGINT', () => {
    interrupts++;
    if (interrupts >= 2) {
      rl.close();
      return;
    }
    newline();
    if (busy) {
      put(`${DIM}[interrupting… Ctrl-C again to leave]${RESET}\n`);
      api.abort(id, 'Ctrl-C in chat').catch(() => undefined);
    } else {
      put(`${DIM}(Ctrl-C again to leave; the conversation stays)${RESET}\n`);
      rl.prompt();
    }
  });
  if (!busy) rl.prompt();
  if (early.length > 0) {
    pasted.push(...early.splice(0));
    submit();
  }
  if (waitingOnRejoin) permissions.check(); // requests that were waiting before this terminal joined
  mcpApprovals.check(); // servers that were waiting before this terminal joined

  await left;
  clearInterval(ticker);
  running.clear();
  clearProgress();
  leaving.abort();
  newline();
  write(`${DIM}left ${id}; it stays alive — rejoin with: durable-agent chat ${id}${RESET}\n`);
  await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 1000))]);
  return 0;
}

/**
 * `durable-agent chat [options] [id | "prompt"]` (and a command line that starts with a flag):
 * the conversation to rejoin, or the new one to start and its first prompt, then {@link chatCommand}.
 */
export async function chatFromCommandLine({ values, positionals }: CommandInput): Promise<number> {
  if (positionals[0] !== undefined && (values.resume !== undefined || values.continue)) {
    throw new UsageError('chat: give a conversation id, --resume <id> or --continue, not several.');
  }
  checkContinueFlags(values);
  const config = configFrom(values, false);
  return withConnection(async (api, taskQueue) => {
    let conversationId: string | undefined;
    let initialPrompt: string | undefined;
    if (positionals[0] !== undefined) {
      // `chat "fix the bug"` (claude "…"): a text with spaces that names no conversation is the first prompt.
      conversationId = await resolveConversationId(api, positionals[0]);
      const exists = (await api.describe(conversationId).catch(() => undefined)) !== undefined;
      if (!exists && /\s/.test(positionals[0].trim())) {
        initialPrompt = positionals[0].trim();
        conversationId = undefined;
      }
    }
    let resume: ResumeInput | undefined;
    let forked: ForkedSession | undefined;
    const from = await continuedConversation(api, values, config.cwd);
    if (from && values['fork-session']) {
      // --fork-session: a new conversation from that one's transcript now, in its own copy of the workspace.
      forked = await forkSession(api, from, { taskQueue });
      conversationId = forked.conversationId;
      const ignored = forkIgnoredOptionsLine(values, from);
      if (ignored) process.stderr.write(`${ignored}\n`);
    } else if (from) {
      // A conversation still open is rejoined; an ended one is continued by a new conversation.
      const status = await api.status(from).catch(() => undefined);
      if (status && !status.ended) conversationId = from;
      else resume = await resumeFrom(api, from);
    }
    // Issue 29: a new conversation reads its settings first (one that cannot be read stops it) and asks about trust once.
    const checked = conversationId === undefined ? await checkChatWorkspace(config, values, { input: process.stdin, output: process.stdout }) : config;
    return await chatCommand({ api, taskQueue, conversationId, config: checked, resume, initialPrompt, forked });
  });
}
