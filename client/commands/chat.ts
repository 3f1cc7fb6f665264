/**
 * `durable-agent chat [id]` (issue 10): an interactive terminal session on a new or existing
 * conversation, drawn with Ink (issue 32, client/chat/app.tsx). The answer streams from the live
 * channel as rendered markdown; each tool call is one line with its result summary (a diff for
 * Edit/Write); a status line (model, tokens, cost) follows each result. Prompts go to the
 * conversation (its slash commands included); chat's own (client/chat/local-commands.ts, /rewind)
 * run here. Permission requests and MCP approvals are arrow-key menus. Esc or Ctrl-C interrupts
 * the running query, a second Ctrl-C leaves; Ctrl-D leaves. Leaving never ends the conversation:
 * `durable-agent chat <id>` rejoins it from any terminal.
 */
import { webSearchDisplay } from '../../common/web-search';
import { LOCAL_COMMAND_HELP } from '../../workflows/input/slash-commands';
import { cliCommand } from '../invocation';
import { getToolSpec } from '../../common/tool-specs';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { ConversationConfigInput } from '../../common/config';
import type { TranscriptMessage } from '../../common/messages';
import type { ConversationClient } from '../api';
import { type ChatPermissionIo, ChatPermissionPrompter } from '../chat-permissions';
import type { ChatKeys } from '../chat/app';
import { completeInput } from '../chat/completion';
import { LOCAL_COMMANDS, type LocalCommandResult, runLocalCommand } from '../chat/local-commands';
import type { ChatStore, MenuDialog } from '../chat/store';
import { renderToolDiff } from '../render/diff';
import { loadMarkdownRenderer, renderMarkdown } from '../render/markdown';
import { WorkerPresenceWatch, noWorkerLine, stalledToolLine } from '../worker-presence';
import { ChatMcpApprovalPrompter } from '../chat-mcp-approval';
import { formatEvent, sanitizeForTerminal } from '../format';
import { NoLiveStreamError, readLive } from '../live';
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
import type { RewindPointListing } from '../../common/checkpoints';

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
const RESET = '\u001b[0m';
const BOLD = '\u001b[1m';
const YELLOW = '\u001b[33m';
/** How long sending a prompt may take before chat says it was not sent. */
const SEND_DEADLINE_MS = 5_000;
/** How often a lost live view tries again. */
const RECONNECT_MS = 1_000;
/** How long a /rewind waits for its line in the feed before it offers the prompt again. */
const REWIND_FEED_WAIT_MS = 2_000;
/** A second Ctrl-C within this leaves (Claude Code: "Press Ctrl-C again to exit"). */
const DOUBLE_CTRL_C_MS = 2_000;
/** Bracketed paste on / off (a paste then arrives between ESC [200~ and ESC [201~). */
const BRACKETED_PASTE_ON = '\u001b[?2004h';
const BRACKETED_PASTE_OFF = '\u001b[?2004l';

const dim = (text: string) => `${DIM}${text}${RESET}`;
const oneLine = (error: unknown) =>
  error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message.split('\n')[0]) : String(error);

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

/** Decided for issue 32: chat is a terminal UI; piped input gets a clear error (a script has `-p`), before anything starts. */
function requireTerminal(input: NodeJS.ReadableStream): void {
  if (!(input as NodeJS.ReadStream).isTTY) {
    throw new UsageError(`chat needs a terminal (its input is not one). For a prompt from a pipe or a script use \`${cliCommand('-p "<prompt>"')}\`.`);
  }
}

/** The conversation on screen now: what the keys reach. */
interface Session {
  submit(prompt: string): void;
  /** A query runs (or a /rewind): Esc / Ctrl-C interrupt it. */
  busy(): boolean;
  abort(): void;
  /** Prints the answer streaming now (it stays above what follows, as an interrupted answer does). */
  flush(): void;
}

export async function chatCommand(options: ChatOptions): Promise<number> {
  const input = (options.input ?? process.stdin) as NodeJS.ReadStream;
  const output = (options.output ?? process.stdout) as NodeJS.WriteStream;
  requireTerminal(input);
  // Loaded only here: plain commands never load Ink or React.
  const [{ loadInk }, React, { ChatApp }, { ChatStore }] = await Promise.all([
    import('../chat/ink'),
    import('react'),
    import('../chat/app'),
    import('../chat/store'),
  ]);
  // marked and marked-terminal are ESM-only too: loaded once, then renderMarkdown is synchronous.
  const [ink] = await Promise.all([loadInk(), loadMarkdownRenderer()]);
  const store = new ChatStore();
  const width = () => Math.max(20, (output.columns ?? 100) - 1);
  const cwd = options.config.cwd ?? process.cwd();
  const early: string[] = [];
  let session: Session | undefined;
  /** When the last Ctrl-C came: a second one soon after leaves (Claude Code's double press), whatever the first did. */
  let lastCtrlC = 0;
  let leave!: () => void;
  const left = new Promise<void>((resolve) => (leave = resolve));
  // Tab offers the chat's own commands and those the conversation interprets (its /help's list).
  const commands = [...LOCAL_COMMANDS, ...LOCAL_COMMAND_HELP.map(({ name, description }) => ({ name, description }))];
  const keys: ChatKeys = {
    submit: (prompt) => {
      lastCtrlC = 0;
      if (session) session.submit(prompt);
      else early.push(prompt); // typed before the chat is connected: sent once it is (issue 19, item 9)
    },
    interrupt: (how) => {
      if (how === 'ctrl-c') {
        const now = Date.now();
        if (now - lastCtrlC < DOUBLE_CTRL_C_MS) return leave();
        lastCtrlC = now;
      }
      if (session?.busy()) {
        session.flush();
        store.print(dim(how === 'ctrl-c' ? '[interrupting… Ctrl-C again to leave]' : '[interrupting…]'));
        session.abort();
      } else if (how === 'ctrl-c') store.print(dim('(Ctrl-C again to leave; the conversation stays)'));
    },
    leave: () => leave(),
    complete: (line, cursor) => completeInput(line, cursor, { cwd, commands }),
  };
  output.write(BRACKETED_PASTE_ON);
  const app = ink.render(React.createElement(ChatApp, { store, keys }), { stdout: output, stdin: input, exitOnCtrlC: false, patchConsole: false });
  let lastId: string | undefined;
  try {
    let target: SessionTarget = { conversationId: options.conversationId, first: true };
    for (;;) {
      const outcome = await runSession(options, target, {
        store,
        width,
        early,
        left,
        setSession: (next) => (session = next),
        ensureLeave: leave,
      });
      lastId = outcome.conversationId;
      session = undefined;
      if (outcome.switchTo === undefined) break;
      target = { conversationId: outcome.switchTo, first: false };
    }
  } finally {
    store.set({ ready: false, dialog: undefined, busySince: undefined, tool: undefined });
    if (lastId) store.print(dim(`left ${lastId}; it stays alive — rejoin with: ${cliCommand(`chat ${lastId}`)}`));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the last lines drawn
    app.unmount();
    output.write(BRACKETED_PASTE_OFF);
  }
  return 0;
}

interface SessionTarget {
  conversationId?: string;
  /** The conversation chat was started for (the options' first prompt, resume and fork apply to it). */
  first: boolean;
}

interface SessionHost {
  store: ChatStore;
  width(): number;
  early: string[];
  /** Resolves when the person leaves (Ctrl-D, Ctrl-C twice, /exit). */
  left: Promise<void>;
  setSession(session: Session): void;
  ensureLeave(): void;
}

/** A rewind point's "files changed since" as the picker shows it. */
function filesSince(point: RewindPointListing): string {
  if (!point.checkpointId) return 'no checkpoint: conversation only';
  if (point.filesChangedSince === undefined) return 'files changed since: unknown';
  if (point.filesChangedSince === 0) return 'no files changed since';
  const paths = point.changedPaths?.length ? ` (${point.changedPaths.slice(0, 3).join(', ')}${point.filesChangedSince > 3 ? ', …' : ''})` : '';
  return `${point.filesChangedSince} file${point.filesChangedSince === 1 ? '' : 's'} changed since${paths}`;
}

async function runSession(options: ChatOptions, target: SessionTarget, host: SessionHost): Promise<{ conversationId: string; switchTo?: string }> {
  const { api } = options;
  const { store, width } = host;
  const print = (text: string) => store.print(text);
  let conversationId = target.conversationId;
  let busy = false;
  let waitingOnRejoin = false;
  let taskQueue = options.taskQueue;
  let presence: WorkerPresenceWatch | undefined;
  /** Tools started and not ended, for the progress line. */
  const running = new Map<string, { name: string; startedAt: number; tail: string }>();
  const watchWorker = async (queue: string) => {
    presence = new WorkerPresenceWatch(
      api,
      queue,
      (state) => {
        if (state !== 'present') {
          const line = state === 'absent' ? noWorkerLine(queue) : stalledToolLine(queue);
          store.set({ noWorker: { since: store.state.noWorker?.since ?? Date.now(), line } });
          print(`${YELLOW}${line}${RESET}`);
        } else {
          store.set({ noWorker: undefined });
          print(dim(`A worker polls task queue "${queue}" again.`));
        }
      },
      // Known once the conversation is: its running tools' activities tell a worker that died.
      { workflowId: () => conversationId, running: () => running.size > 0 },
    );
    return presence.start();
  };
  if (conversationId) {
    const description = await api.describe(conversationId); // a clear error for an unknown id
    taskQueue = description.taskQueue;
    const worker = await watchWorker(taskQueue);
    if (worker === 'absent' && description.status.name === 'RUNNING') {
      print(dim(`rejoined ${conversationId} (its status comes once a worker answers)`));
    } else {
      const status = await api.status(conversationId);
      if (status.ended) {
        presence?.stop();
        throw new Error(`Conversation "${conversationId}" has ended; start a new one with \`${cliCommand('chat')}\`.`);
      }
      busy = status.phase !== 'awaiting_input' && status.phase !== 'idle';
      waitingOnRejoin = busy;
      if (target.first && options.forked) {
        print(dim(`conversation ${conversationId} (rejoin with: ${cliCommand(`chat ${conversationId}`)})`));
        print(dim(sanitizeForTerminal(describeFork(options.forked))));
      } else print(dim(`rejoined ${conversationId} · ${status.currentModel} · ${status.queryCount} queries · ${formatUsd(status.totalCostUsd)}`));
    }
  } else {
    // Said before anything waits on a worker (issue 32: a query without one took 31 s to give up).
    await watchWorker(taskQueue);
    conversationId = (
      await api.start({
        config: options.config,
        taskQueue,
        resume: target.first ? options.resume : undefined,
        firstPrompt: target.first ? options.initialPrompt : undefined,
      })
    ).conversationId;
    print(dim(`conversation ${conversationId} (rejoin with: ${cliCommand(`chat ${conversationId}`)})`));
    if (target.first && options.resume) print(dim(`continuing ${options.resume.fromConversationId} (${options.resume.messages.length} messages)`));
  }
  const id = conversationId;
  const newConversation = target.conversationId === undefined;
  print(dim('Enter sends · \\ + Enter: newline · Esc interrupts · Ctrl-C twice or Ctrl-D leaves, the conversation stays'));
  if (busy) store.set({ busySince: Date.now() });

  const leaving = new AbortController();
  let switchTo: string | undefined;
  const sentByMe = new Set<string>();
  // One question at a time (a permission request and an MCP server's approval): the next waits its turn.
  let questionLine: Promise<unknown> = Promise.resolve();
  const choose: ChatPermissionIo['choose'] = (title, choices, signal) => {
    const turn = questionLine.then(
      () =>
        new Promise<{ value: string; text?: string } | undefined>((resolve, reject) => {
          if (signal.aborted) return reject(new Error('not waiting any more'));
          const onAbort = () => {
            if (store.state.dialog === dialog) store.set({ dialog: undefined });
            reject(new Error('not waiting any more'));
          };
          const dialog: MenuDialog = {
            title,
            choices,
            resolve: (picked) => {
              signal.removeEventListener('abort', onAbort);
              if (store.state.dialog === dialog) store.set({ dialog: undefined });
              resolve(picked);
            },
          };
          signal.addEventListener('abort', onAbort, { once: true });
          store.set({ dialog });
        }),
    );
    questionLine = turn.catch(() => undefined);
    return turn;
  };
  const questions: ChatPermissionIo = { print, choose };
  const permissions = new ChatPermissionPrompter(api, id, questions, leaving.signal);
  // Issue 22: "New MCP server found in .mcp.json" for project servers waiting for approval, once each.
  const mcpApprovals = new ChatMcpApprovalPrompter(api, id, questions, leaving.signal);

  // ---- the live channel, from now on ----
  /** Set while this terminal's /rewind runs: called when the feed's line for it arrives. */
  let rewindShown: (() => void) | undefined;
  /** The running query is a local slash command (/help, /cost): no result or status line after it. */
  let localCommand = false;
  const idle = () => {
    busy = false;
    store.set({ busySince: undefined, tool: undefined });
  };
  const statusLine = async () => {
    const status = await api.status(id).catch(() => undefined);
    if (!status) return;
    const tokens = status.usage.input_tokens + status.usage.cache_read_input_tokens + status.usage.cache_creation_input_tokens;
    const background = (status.backgroundTasks ?? []).filter((task) => task.status === 'running').length;
    const backgroundPart = background > 0 ? ` · ${background} background` : '';
    print(
      dim(
        `[${status.currentModel} · ${tokens} in / ${status.usage.output_tokens} out tokens · context ${status.context.percentUsed.toFixed(0)}% · ${formatUsd(status.totalCostUsd)}${backgroundPart}]`,
      ),
    );
  };
  const toolSummaries = new Map<string, string>();
  const toolInputs = new Map<string, unknown>();
  const showRunning = () => {
    const last = [...running.entries()].at(-1);
    if (!last) return store.set({ tool: undefined });
    const [toolUseId, tool] = last;
    const call = toolCallLine(tool.name, argumentFromSummary(tool.name, toolSummaries.get(toolUseId) ?? ''));
    const tail =
      sanitizeForTerminal(tool.tail)
        .split('\n')
        .filter((line) => line.trim() !== '')
        .at(-1)
        ?.trim() ?? '';
    store.set({ tool: { call: sanitizeForTerminal(call) + (running.size > 1 ? ` (+${running.size - 1} more)` : ''), startedAt: tool.startedAt, tail } });
  };
  const markdown = (text: string) => renderMarkdown(sanitizeForTerminal(text), width());
  /**
   * An answer whose text streamed ends with `text_end` then its message: the web searches the API
   * ran before that text get their lines first, as they happened (issue 33).
   */
  const printSearchesBeforeStreamedText = (ops: ViewOp[]): ViewOp[] => {
    const next = ops.findIndex((op) => op.op === 'event' && op.textShown && op.event.message.type === 'assistant');
    if (next < 1 || ops[next - 1].op !== 'text_end') return ops;
    const event = ops[next] as Extract<ViewOp, { op: 'event' }>;
    if (event.event.message.type !== 'assistant') return ops;
    const { searches } = webSearchDisplay(event.event.message.message.content);
    for (const search of searches) print(dim(sanitizeForTerminal(search)));
    return ops;
  };
  const show = async (op: ViewOp) => {
    switch (op.op) {
      case 'text':
        store.set({ streaming: store.state.streaming + op.text });
        return;
      case 'retract':
        store.set({ streaming: '' });
        return;
      case 'text_end': {
        const text = store.state.streaming;
        store.set({ streaming: '' });
        if (text.trim() !== '') print(markdown(text.trim()));
        return;
      }
      case 'thinking':
        return;
      case 'tool':
        if (op.item.type === 'tool_end') {
          permissions.settled(op.item.toolUseId);
          const call = toolCallLine(op.item.name, argumentFromSummary(op.item.name, toolSummaries.get(op.item.toolUseId) ?? ''));
          const diff = op.item.isError ? undefined : renderToolDiff(op.item.name, toolInputs.get(op.item.toolUseId), width());
          // A file change is told by its diff's count (`Updated x.ts with 1 addition`), other results by the item's one line.
          const changed = getToolSpec(op.item.name)?.changePreview ? { name: op.item.name, input: toolInputs.get(op.item.toolUseId) } : undefined;
          print(
            `${sanitizeForTerminal(`${call}\n${toolResultLine(op.item.summary, op.item.isError, 120, changed)}`)}${diff ? `\n${diff.replace(/\n+$/, '')}` : ''}`,
          );
          running.delete(op.item.toolUseId);
          toolInputs.delete(op.item.toolUseId);
          showRunning();
        } else if (op.item.type === 'tool_start') {
          toolSummaries.set(op.item.toolUseId, op.item.summary);
          running.set(op.item.toolUseId, { name: op.item.name, startedAt: Date.now(), tail: '' });
          showRunning();
        } else if (op.item.type === 'tool_progress') {
          const tool = running.get(op.item.toolUseId);
          if (tool) tool.tail = op.item.tail;
          showRunning();
        }
        return;
      case 'event': {
        const message = op.event.message;
        if (message.type === 'user_input') {
          localCommand = false;
          if (sentByMe.has(message.uuid)) return;
          busy = true;
          store.set({ busySince: Date.now() });
          // A background task's end (issue 21) is not a person's prompt: its summary line instead of its XML.
          const notification = describeTaskNotification(message.prompt);
          if (notification) print(dim(sanitizeForTerminal(notification)));
          else print(`${sanitizeForTerminal(`> ${message.prompt}`)}  ${dim('(from another terminal)')}`);
          return;
        }
        if (message.type === 'assistant') {
          for (const block of message.message.content) if (block.type === 'tool_use') toolInputs.set(block.id, block.input);
          // Issue 33: the API's web searches get their line (before streamed text: printSearchesBeforeStreamedText), and the sources the answer cites follow it.
          const { searches, sources } = webSearchDisplay(message.message.content);
          if (!op.textShown) for (const search of searches) print(dim(sanitizeForTerminal(search)));
          // Text streamed already; tool calls get their line when they finish.
          if (!op.textShown) {
            const text = message.message.content.flatMap((block) => (block.type === 'text' && block.text.trim() ? [block.text.trim()] : [])).join('\n\n');
            if (text) print(markdown(text));
          }
          if (sources.length > 0) print(dim(sanitizeForTerminal(sources.join('\n'))));
          return;
        }
        if (message.type === 'user') {
          // Tool results: the tool lines show them. A local slash command's output (/help, /cost,
          // /status, an unknown command) is this message's text: shown as the command printed it.
          if (message.command?.kind !== 'local') return;
          localCommand = true;
          const line = formatEvent(op.event);
          if (line) print(sanitizeForTerminal(line));
          return;
        }
        if (message.type === 'result') {
          permissions.settled(); // nothing of the query waits any more
          running.clear(); // tools of an aborted query end without their own item
          // Idle as soon as the result shows: a key pressed while the status line is fetched meets an idle chat.
          const shown = !localCommand;
          localCommand = false;
          idle();
          if (shown) {
            const line = formatEvent(op.event);
            if (line) print(dim(sanitizeForTerminal(line)));
            await statusLine();
          }
          return;
        }
        if (message.type === 'system' && message.content.includes('Waiting for permission:')) {
          permissions.check(); // the menu says it all
          return;
        }
        if (message.type === 'system' && rewindShown && /^Rewound to before prompt \d+ /.test(message.content)) {
          // This terminal's /rewind printed its outcome already.
          rewindShown();
          return;
        }
        if (message.type === 'system' && /^MCP server ".*" \(project\) needs approval/.test(message.content)) {
          mcpApprovals.check(); // the menu says it all
          return;
        }
        const line = formatEvent(op.event);
        if (line) print(sanitizeForTerminal(line));
        return;
      }
    }
  };

  // With no worker the offset query waits for one: the live view starts when it answers.
  const fromOffset = (async () => {
    if (newConversation) return 0;
    for (;;) {
      try {
        return await WorkflowStreamClient.create(api.client, id).getOffset();
      } catch (error) {
        if (leaving.signal.aborted || error instanceof WorkflowNotFoundError) return 0;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    }
  })();
  // The live view survives a server that goes away for a while: it says so once, keeps what is
  // typed (see `unsent`), and reads on from its offset when the server answers again (item 9).
  const reading = (async () => {
    const view = new LiveView();
    let offset = await fromOffset;
    let lost = false;
    while (!leaving.signal.aborted) {
      try {
        for await (const entry of readLive(api.client, id, offset, leaving.signal)) {
          offset = entry.offset + 1;
          if (lost) {
            lost = false;
            print(dim('(live view back)'));
          }
          for (const op of printSearchesBeforeStreamedText(view.apply(entry))) await show(op);
        }
        if (!leaving.signal.aborted) {
          print(dim('the conversation has ended'));
          host.ensureLeave();
        }
        return;
      } catch (error) {
        if (leaving.signal.aborted) return;
        if (error instanceof NoLiveStreamError || error instanceof WorkflowNotFoundError) {
          print(
            error instanceof NoLiveStreamError
              ? `${error.message} Use \`${cliCommand('send --follow')}\` for it.`
              : `The conversation is gone: ${error.message}`,
          );
          host.ensureLeave();
          return;
        }
        if (!lost) {
          lost = true;
          print(`Lost the live view (${oneLine(error)}); reconnecting — what you type is kept. Ctrl-D leaves.`);
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    }
  })();

  let sending: Promise<unknown> = Promise.resolve();
  // A prompt the server did not take: kept, and sent again on an empty Enter (issue 19, item 9).
  let unsent: string | undefined;
  let offerSerial = 0;
  const offer = (text: string) => store.set({ offer: { text, serial: ++offerSerial } });
  const send = (prompt: string) => {
    busy = true;
    store.set({ busySince: Date.now() });
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
            print(`✗ Not sent — the Temporal server did not take it (${oneLine(error)}). It is kept: press Enter to send it again.`);
            idle();
          },
        ),
    );
  };
  /** A local command's outcome: text printed, a picker shown, a prompt sent, the chat left or switched. */
  const settle = async (result: LocalCommandResult): Promise<void> => {
    switch (result.kind) {
      case 'text':
        print(sanitizeForTerminal(result.text));
        return;
      case 'exit':
        host.ensureLeave();
        return;
      case 'send':
        send(result.prompt);
        return;
      case 'switch':
        switchTo = result.conversationId;
        leaving.abort();
        return;
      case 'pick': {
        const picked = await choose(
          result.title,
          result.items.map((item) => ({ label: item.hint ? `${item.label}  ${dim(item.hint)}` : item.label, value: item.value })),
          leaving.signal,
        ).catch(() => undefined);
        if (picked) await settle(await result.choose(picked.value));
        return;
      }
    }
  };
  const rewind = async (line: string) => {
    // Issue 31: Claude Code's /rewind is the terminal's: pickers here, and the rewound prompt comes back to edit.
    let [, n, mode] = line.trim().split(/\s+/);
    if (n === undefined) {
      const points = await api.checkpoints(id);
      if (points.length === 0) return print('No prompts to rewind to yet.');
      const picked = await choose(
        'Rewind to just before which prompt?',
        points.map((point) => ({
          label: sanitizeForTerminal(`${point.text.split('\n', 1)[0].slice(0, width() - 60)}  — ${filesSince(point)}`),
          value: String(point.n),
        })),
        leaving.signal,
      ).catch(() => undefined);
      if (!picked) return print(dim('(rewind cancelled)'));
      n = picked.value;
      if (mode === undefined) {
        const canCode = points[Number(n) - 1]?.checkpointId !== undefined;
        const how = await choose(
          canCode ? 'Restore what?' : 'No file checkpoint for that prompt: restore the conversation?',
          canCode
            ? [
                { label: 'Restore code and conversation', value: 'both' },
                { label: 'Restore conversation', value: 'conversation' },
                { label: 'Restore code', value: 'code' },
                { label: 'Never mind', value: '' },
              ]
            : [
                { label: 'Restore conversation', value: 'conversation' },
                { label: 'Never mind', value: '' },
              ],
          leaving.signal,
        ).catch(() => undefined);
        if (!how?.value) return print(dim('(rewind cancelled)'));
        mode = how.value;
      }
    }
    const feedLine = new Promise<void>((resolve) => (rewindShown = resolve));
    let rewoundHere = false;
    const again = await rewindInChat(`/rewind ${n} ${mode ?? ''}`.trim(), {
      api,
      conversationId: id,
      print,
      question: () => Promise.resolve(''), // n and mode are given: it asks nothing
      rewound: () => (rewoundHere = true),
    });
    if (rewoundHere) await Promise.race([feedLine, new Promise((resolve) => setTimeout(resolve, REWIND_FEED_WAIT_MS))]);
    if (again) offer(again);
  };
  const submit = (typed: string) => {
    let prompt = typed.trim();
    if (!prompt && unsent !== undefined) prompt = unsent;
    if (!prompt) return;
    print(`${BOLD}>${RESET} ${sanitizeForTerminal(prompt).replace(/\n/g, '\n  ')}`);
    if (/^\/rewind(\s|$)/.test(prompt)) {
      busy = true;
      sending = sending
        .then(() => rewind(prompt))
        .catch((error: unknown) => print(`✗ ${oneLine(error)}`))
        .finally(() => {
          rewindShown = undefined;
          busy = false;
        });
      return;
    }
    if (prompt.startsWith('/')) {
      sending = sending.then(async () => {
        const result = await runLocalCommand(prompt, {
          api,
          conversationId: id,
          cwd: options.config.cwd ?? process.cwd(),
          taskQueue,
          config: options.config,
        }).catch((error: unknown) => ({ kind: 'text', text: `✗ ${oneLine(error)}` }) as LocalCommandResult);
        if (result === undefined) send(prompt);
        else await settle(result).catch((error: unknown) => print(`✗ ${oneLine(error)}`));
      });
      return;
    }
    send(prompt);
  };
  host.setSession({
    submit,
    busy: () => busy,
    flush: () => void show({ op: 'text_end' }),
    abort: () => void api.abort(id, 'interrupted in chat').catch(() => undefined),
  });
  store.set({ ready: true });
  if (target.first && options.initialPrompt && newConversation) host.early.unshift(options.initialPrompt);
  for (const prompt of host.early.splice(0)) submit(prompt);
  if (waitingOnRejoin) permissions.check(); // requests that were waiting before this terminal joined
  if (presence?.presence !== 'absent') mcpApprovals.check(); // servers that were waiting before this terminal joined

  const switched = new Promise<void>((resolve) => leaving.signal.addEventListener('abort', () => resolve(), { once: true }));
  await Promise.race([host.left, switched]);
  leaving.abort();
  presence?.stop();
  store.set({ busySince: undefined, tool: undefined, streaming: '', noWorker: undefined });
  await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 1000))]);
  return { conversationId: id, switchTo };
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
  requireTerminal(process.stdin);
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
