/** `--fork-session` (Claude Code's: with -c / -r, a new session from that one's instead of reusing it) on ask and chat. */
import { describe, expect, it } from 'vitest';
import { claudeCodeArgv } from '../../client/claude-flags';
import { type ForkedSession, checkContinueFlags, describeFork, forkIgnoredOptionsLine } from '../../client/continue-conversation';
import { promptForInputLine } from '../../client/commands/chat';
import { cli, isolateEnvironment } from '../helpers/cli';

isolateEnvironment();

describe('--fork-session', () => {
  it("passes through Claude Code's spellings to ask and chat", () => {
    expect(claudeCodeArgv(['-r', 'conv-1', '--fork-session'])).toEqual(['chat', '--resume', 'conv-1', '--fork-session']);
    expect(claudeCodeArgv(['--fork-session', '-c'])).toEqual(['chat', '--fork-session', '--continue']);
    expect(claudeCodeArgv(['-p', '-r', 'conv-1', '--fork-session', 'try B'])).toEqual(['ask', '--resume', 'conv-1', '--fork-session', 'try B']);
    expect(claudeCodeArgv(['ask', '-c', '--fork-session', 'go'])).toEqual(['ask', '--continue', '--fork-session', 'go']);
  });

  it('needs --continue or --resume', () => {
    expect(() => checkContinueFlags({ 'fork-session': true })).toThrow(/--fork-session forks the conversation --continue or --resume <id> picks/);
    expect(() => checkContinueFlags({ 'fork-session': true, resume: 'conv-1' })).not.toThrow();
    expect(() => checkContinueFlags({ 'fork-session': true, continue: true })).not.toThrow();
    expect(() => checkContinueFlags({ 'fork-session': true, continue: true, resume: 'x' })).toThrow(/give one of them/);
  });

  it('is a usage error without -c / -r, before anything connects (ask, -p and chat)', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    for (const argv of [['ask', '--fork-session', 'hi'], ['-p', '--fork-session', 'hi'], ['chat', '--fork-session'], ['--fork-session']]) {
      const run = await cli(...argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.err).toMatch(/--fork-session forks the conversation --continue or --resume <id> picks/);
    }
  });

  it('says where the fork is, and which options it did not apply', () => {
    const forked: ForkedSession = {
      conversationId: 'conv-2',
      parentConversationId: 'conv-1',
      fork: { parentConversationId: 'conv-1', cwd: '/w-fork-1234abcd', files: 3, git: true, checkpointId: 'c'.repeat(40) },
    };
    expect(describeFork(forked)).toBe('Forked conv-1 into conv-2, in /w-fork-1234abcd (3 files, a git repository of its own); conv-1 is unchanged.');
    expect(forkIgnoredOptionsLine({ resume: 'conv-1', 'fork-session': true, cwd: '/w', 'output-format': 'json' }, 'conv-1')).toBeUndefined();
    expect(forkIgnoredOptionsLine({ resume: 'conv-1', 'fork-session': true, model: 'haiku', 'dangerously-skip-permissions': true }, 'conv-1')).toBe(
      "Note: the fork keeps conv-1's settings; not applied: --model, --dangerously-skip-permissions.",
    );
  });
});

describe('/rewind in chat: the prompt offered again', () => {
  it('is one line for the editor: newlines and tabs as spaces, other control characters left out', () => {
    expect(promptForInputLine('fix the bug\nin a.ts\r\nplease')).toBe('fix the bug in a.ts please');
    expect(promptForInputLine('a\tb\u001b[2Jc\u0007')).toBe('a b[2Jc');
  });
});
