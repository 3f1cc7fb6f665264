/**
 * The model of `durable-agent worker --scripted` (issue 19, item 5; issue 32, item 5): a way to
 * try every feature without an API key. The worker, workflows, tools, permissions and Temporal are
 * all real; only the model's answers come from the local scripted model server, chosen by this
 * responder from a few plain-words commands in the prompt (SCRIPTED_HELP lists them).
 *
 * It decides from the request's messages (and which tools the request offers), as a real model
 * would: the latest text a person typed, and how many answers it gave since. What is not a prompt
 * is skipped: context reminders, the `[Request interrupted by user…]` marks and the tool results an
 * interruption left behind, and the compaction's summary message. A compaction's own request (the
 * summary instruction) gets a summary. After a tool ran, the answer quotes what came back; a
 * background command's start is followed by a TaskOutput that reads its output. The demo task of
 * `npm start` ("The test in test.js fails…") plays the demo's scripted conversation.
 */
import { intervalToCron } from '../common/background';
import type { RecordedRequest, Responder, ScriptedBlock, ScriptedTurn } from '../testing/scripted-model-server';

/** The demo's task, as `npm start` sends it. */
export const DEMO_PROMPT = 'The test in test.js fails. Find the bug in math.js, fix it, and run `node test.js` to verify.';

export const SCRIPTED_HELP = [
  "I'm the scripted model (no API key in use): the worker, tools, permissions and Temporal are real, my answers are canned. Try:",
  '  read <file>                      — Read',
  '  write <file> <text>              — Write (asks for permission in the default mode)',
  '  edit <file> <old> => <new>       — Edit',
  '  run <command>                    — Bash, e.g. run ls -la',
  '  run in background <command>      — Bash in the background, then TaskOutput reads its output',
  '  slow <seconds>                   — a Bash that prints a line a second (Ctrl-C aborts it)',
  '  glob <pattern> / grep <pattern>  — Glob / Grep',
  '  agent <task>                     — a subagent does <task>, e.g. agent read notes.txt',
  '  agent in background <task>       — a background agent; its answer comes as a notification',
  '  wakeup <delay> <prompt>          — ScheduleWakeup: <prompt> comes back after <delay> (90s, 2m; at least 60 s)',
  '  every <interval> <prompt>        — CronCreate: <prompt> runs every <interval> (5m, 1h), e.g. every 5m read notes.txt',
  '  crons                            — CronList: the scheduled jobs',
  `  ${DEMO_PROMPT}`,
  '                                   — the demo: find and fix a bug (in a copy of the demo workspace)',
].join('\n');

type Block = { type: string; text?: string; content?: unknown; is_error?: boolean; name?: string; id?: string; input?: unknown; tool_use_id?: string };
type Message = { role: string; content: string | Block[] };

const slow = { deltaDelayMs: 15 } as const;

/** The first words of the compaction's summary instruction (activities/compact-conversation.ts). */
const COMPACT_TASK = 'Your task is to write a detailed summary of the conversation so far';
/** The first words of the message a compaction leaves in place of the window (workflows/compaction/summary.ts). */
const CONTINUED = 'This session is being continued from an earlier conversation';
/** What an interruption leaves (workflows/messages.ts): `[Request interrupted by user]`, `… for tool use]`. */
const INTERRUPTION = /^\[Request interrupted by user[^\]]*\]$/;

/** Text blocks that are not what a person typed: reminders, interruption marks, a compaction's summary or instruction. */
function isNotTyped(text: string): boolean {
  const trimmed = text.trim();
  return (
    trimmed === '' ||
    trimmed.startsWith('<system-reminder>') ||
    INTERRUPTION.test(trimmed) ||
    trimmed.startsWith(CONTINUED) ||
    (trimmed.startsWith('IMPORTANT: Respond with text only') && trimmed.includes(COMPACT_TASK))
  );
}

/**
 * The text a person typed in a user message, or undefined when it holds none (only tool results,
 * reminders, an interruption's marks or a compaction's summary). A prompt typed after an
 * interruption shares its user turn with the interrupted call's tool result: the text counts.
 */
function promptOf(message: Message | undefined): string | undefined {
  if (!message || message.role !== 'user') return undefined;
  const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const texts = blocks.flatMap((block) => (block.type === 'text' && block.text && !isNotTyped(block.text) ? [block.text] : []));
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function textsOf(message: Message): string[] {
  return typeof message.content === 'string'
    ? [message.content]
    : message.content.flatMap((block) => (block.type === 'text' && block.text ? [block.text] : []));
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

function toolResults(message: Message): Block[] {
  return Array.isArray(message.content) ? message.content.filter((block) => block.type === 'tool_result') : [];
}

/** "Here is what came back": each tool result's first lines. */
function reportResults(message: Message): ScriptedTurn {
  const parts = toolResults(message).map((block) => {
    const lines = resultText(block.content).trimEnd().split('\n');
    const head = lines.slice(0, 12).join('\n') + (lines.length > 12 ? `\n… (${lines.length - 12} more lines)` : '');
    return block.is_error ? `That did not work:\n${head}` : `Here is what came back:\n${head}`;
  });
  return { ...slow, content: [{ type: 'text', text: parts.join('\n\n') || 'Done.' }] };
}

function tool(text: string, name: string, input: Record<string, unknown>): ScriptedTurn {
  return { ...slow, content: [{ type: 'text', text }, { type: 'tool_use', name, input } as ScriptedBlock] };
}

function say(text: string): ScriptedTurn {
  return { ...slow, content: [{ type: 'text', text }] };
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `2m`, `1h`, `1d` → seconds; undefined otherwise. */
function durationSeconds(token: string): number | undefined {
  const match = /^(\d{1,6})([smhd]?)$/i.exec(token);
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[(match[2] || 's').toLowerCase()];
  return seconds > 0 ? seconds : undefined;
}

/** The first answer to a prompt. `offered`: whether the request offers a tool (a subagent has no cron, for one). */
export function answerPrompt(prompt: string, offered: (tool: string) => boolean = () => true): ScriptedTurn {
  const text = prompt.trim();
  if (text.startsWith('<task-notification>')) return answerNotification(text);
  const [word = '', ...restWords] = text.split(/\s+/);
  const rest = text.slice(word.length).trim();
  const unavailable = (name: string) => say(`${name} is not among the tools of this conversation, so I cannot do that here.`);
  switch (word.toLowerCase()) {
    case 'read':
      if (rest) return tool(`Reading ${rest}.`, 'Read', { file_path: rest });
      break;
    case 'write': {
      const [file, ...content] = restWords;
      if (file) return tool(`Writing ${file}.`, 'Write', { file_path: file, content: `${content.join(' ')}\n` });
      break;
    }
    case 'edit': {
      const match = /^(\S+)\s+([\s\S]+?)\s+=>\s+([\s\S]*)$/.exec(rest);
      if (match) return tool(`Editing ${match[1]}.`, 'Edit', { file_path: match[1], old_string: match[2], new_string: match[3] });
      break;
    }
    case 'run':
    case 'bash': {
      const background = /^in\s+(?:the\s+)?background\s+([\s\S]+)$/i.exec(rest);
      if (background)
        return tool('Starting it in the background.', 'Bash', {
          command: background[1].trim(),
          description: `Run ${background[1].trim().slice(0, 40)}`,
          run_in_background: true,
        });
      if (rest) return tool('Running it.', 'Bash', { command: rest, description: `Run ${rest.slice(0, 40)}` });
      break;
    }
    case 'slow': {
      const seconds = /^\d{1,4}$/.test(rest) ? Number(rest) : 30;
      return tool(`Running a ${seconds}-second job.`, 'Bash', {
        command: `for i in $(seq 1 ${seconds}); do echo "step $i of ${seconds}"; sleep 1; done`,
        description: `A ${seconds}-second job`,
        timeout: Math.min(600_000, (seconds + 30) * 1000),
      });
    }
    case 'glob':
      if (rest) return tool('Looking for files.', 'Glob', { pattern: rest });
      break;
    case 'grep':
      if (rest) return tool('Searching.', 'Grep', { pattern: rest });
      break;
    case 'agent': {
      const background = /^in\s+(?:the\s+)?background\s+([\s\S]+)$/i.exec(rest);
      const task = (background ? background[1] : rest).trim();
      if (!task) break;
      if (!offered('Agent')) return unavailable('Agent');
      return tool(background ? 'Handing this to a background agent.' : 'Handing this to a subagent.', 'Agent', {
        description: task.split(/\s+/).slice(0, 4).join(' '),
        prompt: task,
        subagent_type: 'general-purpose',
        ...(background ? { run_in_background: true } : {}),
      });
    }
    case 'wakeup': {
      const [delay = '', ...promptWords] = restWords;
      const seconds = durationSeconds(delay);
      const wakePrompt = promptWords.join(' ').trim();
      if (seconds === undefined || !wakePrompt) break;
      if (!offered('ScheduleWakeup')) return unavailable('ScheduleWakeup');
      return tool(`I'll come back to this in ${delay}.`, 'ScheduleWakeup', { delaySeconds: seconds, reason: wakePrompt.slice(0, 60), prompt: wakePrompt });
    }
    case 'every': {
      const [interval = '', ...promptWords] = restWords;
      const seconds = /^\d{1,6}[smhd]$/i.test(interval) ? durationSeconds(interval) : undefined;
      const jobPrompt = promptWords.join(' ').trim();
      if (seconds === undefined || !jobPrompt) break;
      if (!offered('CronCreate')) return unavailable('CronCreate');
      const { cron, note } = intervalToCron(seconds);
      return tool(`Scheduling it every ${interval}${note ? ` (${note})` : ''}.`, 'CronCreate', { cron, prompt: jobPrompt, recurring: true });
    }
    case 'crons':
      if (!offered('CronList')) return unavailable('CronList');
      return tool('Listing the scheduled jobs.', 'CronList', {});
  }
  return say(SCRIPTED_HELP);
}

/** A `<task-notification>` (a background command or agent ended): what it says, briefly. */
function answerNotification(text: string): ScriptedTurn {
  const tag = (name: string) => new RegExp(`<${name}>\\n?([\\s\\S]*?)\\n?</${name}>`).exec(text)?.[1]?.trim();
  const summary = tag('summary') ?? 'A background task ended';
  const body = tag('output-tail') ?? tag('result');
  const lines = body ? body.split('\n') : [];
  const head = lines.slice(0, 12).join('\n') + (lines.length > 12 ? `\n… (${lines.length - 12} more lines)` : '');
  return say(body ? `${summary}. It said:\n${head}` : `${summary}.`);
}

/**
 * The answer to a compaction's request: a summary in the instruction's shape (`<analysis>`, then
 * `<summary>`), made of the prompts and tool calls in the request, and no tool call.
 */
function summarize(messages: Message[]): ScriptedTurn {
  const prompts = messages.flatMap((message) => {
    const prompt = promptOf(message);
    return prompt === undefined ? [] : [prompt.split('\n')[0].slice(0, 200)];
  });
  const calls = messages.flatMap((message) =>
    message.role === 'assistant' && Array.isArray(message.content)
      ? message.content.filter((block) => block.type === 'tool_use').map((block) => `${block.name} ${JSON.stringify(block.input ?? {}).slice(0, 120)}`)
      : [],
  );
  const quoted = (items: string[]) => (items.length ? items.map((item) => `   - ${item}`).join('\n') : '   - (none)');
  return say(
    [
      '<analysis>The scripted model lists the prompts and tool calls it was sent; it does not reason about them.</analysis>',
      '<summary>',
      `1. Primary request and intent: the user's prompts, in order:\n${quoted(prompts)}`,
      `2. Tool calls made:\n${quoted(calls)}`,
      '3. Pending tasks: none; each prompt was answered.',
      `4. Current work: ${prompts.length ? `the last prompt, "${prompts[prompts.length - 1]}"` : 'nothing yet'}.`,
      '</summary>',
    ].join('\n'),
  );
}

/** The id a background command's start reported (workflows/background/commands.ts, startedText). */
function startedBackgroundTask(message: Message): string | undefined {
  for (const block of toolResults(message)) {
    const match = /^Command running in background with ID: ([A-Za-z0-9_-]+)\./.exec(resultText(block.content));
    if (match && !block.is_error) return match[1];
  }
  return undefined;
}

/** The demo's scripted conversation (`npm start`): explore, reproduce, fix, verify, report — by the turn since its prompt. */
export function demoTurn(turn: number): ScriptedTurn {
  switch (turn) {
    case 0:
      return {
        ...slow,
        content: [
          { type: 'text', text: "I'll look at the code and the test first." },
          { type: 'tool_use', name: 'Read', input: { file_path: 'math.js' } },
          { type: 'tool_use', name: 'Read', input: { file_path: 'test.js' } },
        ],
      };
    case 1:
      return tool('Let me reproduce the failure.', 'Bash', { command: 'node test.js', description: 'Run the tests' });
    case 2:
      return tool('The loop in `sum` starts at index 1, so it skips the first element. Fixing the off-by-one.', 'Edit', {
        file_path: 'math.js',
        old_string: 'let i = 1;',
        new_string: 'let i = 0;',
      });
    case 3:
      return { ...slow, content: [{ type: 'tool_use', name: 'Bash', input: { command: 'node test.js', description: 'Run the tests again' } }] };
    default:
      return {
        ...slow,
        content: [
          { type: 'text', text: 'Fixed: `sum` started its loop at index 1 and skipped the first number. It now starts at 0, and `node test.js` passes.' },
        ],
      };
  }
}

/** The responder of `worker --scripted` (and of `npm start` without a key). */
export const scriptedResponder: Responder = (request: RecordedRequest) => {
  const messages = (request.body?.messages ?? []) as Message[];
  // Requests that are not a conversation's turn (a title, say) get a plain answer.
  if (!Array.isArray(messages) || messages.length === 0) return { content: [{ type: 'text', text: 'OK' }] };
  const last = messages[messages.length - 1];
  if (last.role === 'user' && textsOf(last).some((text) => text.includes(COMPACT_TASK))) return summarize(messages);
  const tools = Array.isArray(request.body?.tools) ? (request.body.tools as Array<{ name?: string }>).map((entry) => entry.name) : undefined;
  const offered = (name: string) => tools === undefined || tools.includes(name);
  let promptIndex = messages.length - 1;
  while (promptIndex >= 0 && promptOf(messages[promptIndex]) === undefined) promptIndex--;
  if (promptIndex < 0) {
    // Only a compaction's summary (an automatic compaction mid-task): nothing typed to answer.
    if (messages.some((message) => textsOf(message).some((text) => text.trim().startsWith(CONTINUED))))
      return say('Picking up after the compaction: the summary above covers what was done, and nothing is left open. What next?');
    return say(SCRIPTED_HELP);
  }
  const prompt = promptOf(messages[promptIndex])!;
  const turn = messages.slice(promptIndex + 1).filter((message) => message.role === 'assistant').length;
  if (prompt.includes(DEMO_PROMPT)) return demoTurn(turn);
  if (turn === 0) return answerPrompt(prompt, offered);
  const taskId = last.role === 'user' ? startedBackgroundTask(last) : undefined;
  if (taskId && offered('TaskOutput'))
    return tool('It runs in the background; reading its output when it finishes.', 'TaskOutput', { task_id: taskId, block: true });
  return reportResults(last);
};
