/**
 * Claude Code's command line on ours (issue 19, item 13): `-p` / `--print` is `ask`, a command
 * line that starts with a flag or a prompt (`durable-agent "fix the bug"`) is `chat`, `-c` / `--continue` and `-r` / `--resume <id>` pick
 * the conversation to continue, `-v` / `--version` prints the version. Pure: argv in, argv out.
 */

const PRINT = new Set(['-p', '--print']);

/** Our argv for Claude Code's spellings; anything else unchanged. */
export function claudeCodeArgv(argv: readonly string[]): string[] {
  const [first] = argv;
  if (first === '-v' || first === '--version') return ['version', ...argv.slice(1)];
  if (first === undefined || first === '-h' || first === '--help') return [...argv];
  // A first word with spaces is a prompt (`claude "fix the bug"`): no command name has one.
  const chat = first.startsWith('-') || /\s/.test(first.trim());
  const [command, ...rest] = chat ? [argv.some((arg) => PRINT.has(arg)) ? 'ask' : 'chat', ...argv] : argv;
  if (command !== 'ask' && command !== 'chat') return [...argv];
  // Up to `--`: -p / --print dropped (the command says it), -c and -r spelled out.
  const end = rest.includes('--') ? rest.indexOf('--') : rest.length;
  const flags = rest.slice(0, end).filter((arg) => !PRINT.has(arg));
  return [command, ...flags.map((arg) => (arg === '-c' ? '--continue' : arg === '-r' ? '--resume' : arg)), ...rest.slice(end)];
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
