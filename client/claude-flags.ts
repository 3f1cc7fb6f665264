/**
 * Claude Code's command line on ours (issue 19, item 13): `-p` / `--print` is `ask`, a command
 * line that starts with a flag or a prompt (`durable-agent "fix the bug"`) is `chat`, `-c` / `--continue` and `-r` / `--resume <id>` pick
 * the conversation to continue, `-v` / `--version` prints the version. Pure: argv in, argv out.
 */

const PRINT = new Set(['-p', '--print']);

/** Our commands: a first word that is none of them and has spaces is a prompt (`claude "fix the bug"`). */
const COMMANDS = new Set([
  'ask',
  'start',
  'send',
  'transcript',
  'status',
  'compact',
  'approve',
  'deny',
  'abort',
  'end',
  'chat',
  'list',
  'worker',
  'server',
  'codec-server',
  'help',
  'version',
]);

/** Our argv for Claude Code's spellings; anything else unchanged. */
export function claudeCodeArgv(argv: readonly string[]): string[] {
  const [first] = argv;
  if (first === '-v' || first === '--version') return ['version', ...argv.slice(1)];
  if (first === undefined || first === '-h' || first === '--help') return [...argv];
  let command: string;
  let rest: string[];
  if (first.startsWith('-') || (!COMMANDS.has(first) && /\s/.test(first.trim()))) {
    command = argv.some((arg) => PRINT.has(arg)) ? 'ask' : 'chat';
    rest = [...argv];
  } else {
    [command, ...rest] = argv;
  }
  if (command !== 'ask' && command !== 'chat') return [...argv];
  const out: string[] = [];
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index];
    if (arg === '--') {
      out.push(...rest.slice(index));
      break;
    }
    if (PRINT.has(arg)) continue;
    if (arg === '-c') out.push('--continue');
    else if (arg === '-r') out.push('--resume');
    else out.push(arg);
  }
  return [command, ...out];
}

/**
 * Tool names Claude Code knows beyond ours: their rules in a shared settings file or a flag are
 * kept (they match nothing here). Any other name is a typo (`bash`, `Frobnicate`) and refused.
 */
export const OTHER_CLAUDE_CODE_TOOLS = [
  'Task',
  'MultiEdit',
  'NotebookRead',
  'WebFetch',
  'WebSearch',
  'TodoWrite',
  'TodoRead',
  'BashOutput',
  'KillShell',
  'KillBash',
  'ExitPlanMode',
  'SlashCommand',
  'LS',
] as const;

/** Why a rule's tool name is not one Claude Code or we know, or undefined. `toolNames`: ours. */
export function unknownRuleToolProblem(rule: string, toolNames: readonly string[]): string | undefined {
  const name = /^([^(]*)/.exec(rule.trim())![1].trim();
  if (name === '' || name.startsWith('mcp__')) return undefined;
  const known = [...toolNames, ...OTHER_CLAUDE_CODE_TOOLS];
  if (known.includes(name)) return undefined;
  const sameLetters = known.find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return `unknown tool "${name}" in rule "${rule}"${sameLetters ? ` (tool names are case-sensitive: did you mean "${sameLetters}"?)` : ''}; tools: ${toolNames.join(', ')}.`;
}
