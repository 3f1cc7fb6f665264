/** Claude Code's flags on our CLI (issue 19, item 13). */
import { describe, expect, it } from 'vitest';
import { claudeCodeArgv, unknownRuleToolProblem } from '../../client/claude-flags';
import { TOOL_NAMES } from '../../common/tool-specs';
import { formatResultLine } from '../../client/format';
import type { ResultMessage } from '../../common/result';
import { cli, isolateEnvironment } from '../helpers/cli';
import { runBin } from '../helpers/bin';

isolateEnvironment();

describe("Claude Code's command line", () => {
  it('maps -p / --print to ask, a leading flag to chat, -c and -r to --continue and --resume, -v to version', () => {
    expect(claudeCodeArgv(['-p', 'what is 2+2'])).toEqual(['ask', 'what is 2+2']);
    expect(claudeCodeArgv(['--print', '--output-format', 'json', 'hi'])).toEqual(['ask', '--output-format', 'json', 'hi']);
    expect(claudeCodeArgv(['-c', '-p', 'and now?'])).toEqual(['ask', '--continue', 'and now?']);
    expect(claudeCodeArgv(['-r', 'conv-1', '-p', 'go on'])).toEqual(['ask', '--resume', 'conv-1', 'go on']);
    expect(claudeCodeArgv(['-c'])).toEqual(['chat', '--continue']);
    expect(claudeCodeArgv(['--resume', 'conv-1'])).toEqual(['chat', '--resume', 'conv-1']);
    expect(claudeCodeArgv(['--dangerously-skip-permissions'])).toEqual(['chat', '--dangerously-skip-permissions']);
    expect(claudeCodeArgv(['ask', '-r', 'x', 'go'])).toEqual(['ask', '--resume', 'x', 'go']);
    expect(claudeCodeArgv(['--version'])).toEqual(['version']);
    expect(claudeCodeArgv(['-v'])).toEqual(['version']);
    // Other commands and prompts are left alone (a prompt may say "-c").
    expect(claudeCodeArgv(['send', 'id', '-c'])).toEqual(['send', 'id', '-c']);
    expect(claudeCodeArgv(['ask', '--', '-p is a flag'])).toEqual(['ask', '--', '-p is a flag']);
    expect(claudeCodeArgv(['--help'])).toEqual(['--help']);
    // claude "fix the bug": a prompt with spaces first is chat with that prompt; a one-word typo stays an unknown command.
    expect(claudeCodeArgv(['fix the bug'])).toEqual(['chat', 'fix the bug']);
    expect(claudeCodeArgv(['-p', 'fix the bug'])).toEqual(['ask', 'fix the bug']);
    expect(claudeCodeArgv(['lsit'])).toEqual(['lsit']);
  });

  it('refuses rules for tools nobody knows, and says when only the case is wrong', () => {
    expect(unknownRuleToolProblem('Bash(npm test:*)', TOOL_NAMES)).toBeUndefined();
    expect(unknownRuleToolProblem('WebFetch(domain:example.com)', TOOL_NAMES)).toBeUndefined(); // Claude Code's; kept
    expect(unknownRuleToolProblem('mcp__github__create_issue', TOOL_NAMES)).toBeUndefined();
    expect(unknownRuleToolProblem('Frobnicate', TOOL_NAMES)).toMatch(/unknown tool "Frobnicate"/);
    expect(unknownRuleToolProblem('bash(ls:*)', TOOL_NAMES)).toMatch(/case-sensitive: did you mean "Bash"/);
  });

  it('ask refuses those rules and contradictory permission flags before connecting', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    const frobnicate = await cli('-p', '--allowed-tools', 'Frobnicate', 'hi');
    expect(frobnicate.code).toBe(2);
    expect(frobnicate.err).toMatch(/--allowed-tools: unknown tool "Frobnicate"/);
    const lower = await cli('ask', '--disallowed-tools', 'bash', 'hi');
    expect(lower.code).toBe(2);
    expect(lower.err).toMatch(/did you mean "Bash"/);
    const both = await cli('-p', '--dangerously-skip-permissions', '--permission-mode', 'plan', 'hi');
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--dangerously-skip-permissions is --permission-mode bypassPermissions/);
    const twice = await cli('-p', '-c', '--resume', 'x', 'hi');
    expect(twice.err).toMatch(/--continue and --resume: give one of them/);
  });

  it('prints its version from the installed binary', () => {
    const { code, out } = runBin(['--version']);
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+ \(durable-agent\)$/);
  });

  it('says why a query ended in plain words, without the loop transitions', () => {
    const result = {
      is_error: true,
      subtype: 'error_during_execution',
      terminal_reason: 'aborted_streaming',
      num_turns: 1,
      duration_ms: 1200,
      total_cost_usd: 0.01,
      transitions: ['tool_use'],
    } as unknown as ResultMessage;
    expect(formatResultLine(result)).toBe('✗ interrupted while the model was answering · 1 turn · 1.2s · $0.0100');
    expect(formatResultLine({ ...result, is_error: false, terminal_reason: 'completed' } as ResultMessage)).toBe('✓ done · 1 turn · 1.2s · $0.0100');
  });
});
