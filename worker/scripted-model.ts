/**
 * The model of `durable-agent worker --scripted` (issue 19, item 5): a way to try every feature
 * without an API key. The worker, workflows, tools, permissions and Temporal are all real; only
 * the model's answers come from the local scripted model server, chosen by this responder from
 * a few plain-words commands in the prompt:
 *
 *   read <file>            Read                  write <file> <text>     Write (asks in default mode)
 *   run <command>          Bash                  edit <file> <old> => <new>   Edit
 *   glob <pattern>         Glob                  grep <pattern>          Grep
 *   agent <task>           Agent: a subagent (a child workflow) that does <task> the same way
 *   slow <seconds>         a Bash that prints a line a second (watch it run, press Ctrl-C)
 *   anything else          an answer that lists these commands
 *
 * After a tool ran, the answer quotes what came back. The demo task of `npm start` ("The test in
 * test.js fails…") plays the demo's scripted conversation.
 */
import type { RecordedRequest, Responder, ScriptedBlock, ScriptedTurn } from '../testing/scripted-model-server';

/** The demo's task, as `npm start` sends it. */
export const DEMO_PROMPT = 'The test in test.js fails. Find the bug in math.js, fix it, and run `node test.js` to verify.';

export const SCRIPTED_HELP = [
  "I'm the scripted model (no API key in use): the worker, tools, permissions and Temporal are real, my answers are canned. Try:",
  '  read <file>                      — Read',
  '  write <file> <text>              — Write (asks for permission in the default mode)',
  '  edit <file> <old> => <new>       — Edit',
  '  run <command>                    — Bash, e.g. run ls -la',
  '  slow <seconds>                   — a Bash that prints a line a second (Ctrl-C aborts it)',
  '  glob <pattern> / grep <pattern>  — Glob / Grep',
  '  agent <task>                     — a subagent does <task>, e.g. agent read notes.txt',
  `  ${DEMO_PROMPT}`,
  '                                   — the demo: find and fix a bug (in a copy of the demo workspace)',
].join('\n');

type Message = { role: string; content: string | Array<{ type: string; text?: string; content?: unknown; is_error?: boolean; name?: string }> };

const slow = { deltaDelayMs: 15 } as const;

/** The text a person typed in a user message (context reminders left out), or undefined for tool results. */
function promptOf(message: Message | undefined): string | undefined {
  if (!message || message.role !== 'user') return undefined;
  if (typeof message.content === 'string') return message.content;
  if (message.content.some((block) => block.type === 'tool_result')) return undefined;
  const texts = message.content.flatMap((block) => (block.type === 'text' && block.text && !block.text.startsWith('<system-reminder>') ? [block.text] : []));
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return '';
}

/** "Here is what came back": each tool result's first lines. */
function reportResults(message: Message): ScriptedTurn {
  const blocks = Array.isArray(message.content) ? message.content.filter((block) => block.type === 'tool_result') : [];
  const parts = blocks.map((block) => {
    const lines = resultText(block.content).trimEnd().split('\n');
    const head = lines.slice(0, 12).join('\n') + (lines.length > 12 ? `\n… (${lines.length - 12} more lines)` : '');
    return block.is_error ? `That did not work:\n${head}` : `Here is what came back:\n${head}`;
  });
  return { ...slow, content: [{ type: 'text', text: parts.join('\n\n') || 'Done.' }] };
}

function tool(text: string, name: string, input: Record<string, unknown>): ScriptedTurn {
  return { ...slow, content: [{ type: 'text', text }, { type: 'tool_use', name, input } as ScriptedBlock] };
}

/** The first answer to a prompt. */
export function answerPrompt(prompt: string): ScriptedTurn {
  const text = prompt.trim();
  const [word = '', ...restWords] = text.split(/\s+/);
  const rest = text.slice(word.length).trim();
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
    case 'bash':
      if (rest) return tool('Running it.', 'Bash', { command: rest, description: `Run ${rest.slice(0, 40)}` });
      break;
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
    case 'agent':
      if (rest)
        return tool('Handing this to a subagent.', 'Agent', {
          description: rest.split(/\s+/).slice(0, 4).join(' '),
          prompt: rest,
          subagent_type: 'general-purpose',
        });
      break;
  }
  return { ...slow, content: [{ type: 'text', text: SCRIPTED_HELP }] };
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
  // Requests that are not the conversation's own turn (a compaction's summary, a title) get a plain answer.
  if (!Array.isArray(messages) || messages.length === 0) return { content: [{ type: 'text', text: 'OK' }] };
  let promptIndex = messages.length - 1;
  while (promptIndex >= 0 && promptOf(messages[promptIndex]) === undefined) promptIndex--;
  const prompt = promptIndex >= 0 ? promptOf(messages[promptIndex])! : '';
  const turn = messages.slice(promptIndex + 1).filter((message) => message.role === 'assistant').length;
  if (prompt.includes(DEMO_PROMPT)) return demoTurn(turn);
  if (turn === 0) return answerPrompt(prompt);
  return reportResults(messages.at(-1)!);
};
