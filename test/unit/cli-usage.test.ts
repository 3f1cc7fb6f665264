/**
 * The command line on commander (issue 32, item 3): each command's own --help, "did you mean" for
 * a mistyped command or option, the missing argument named, usage mistakes exit 2 — all before
 * anything connects (TEMPORAL_ADDRESS points where nothing answers).
 */
import { describe, expect, it } from 'vitest';
import { cli, isolateEnvironment } from '../helpers/cli';

isolateEnvironment();

describe('the command line', () => {
  it("prints a command's own usage for --help and `help <command>`, exit 0", async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    const help = await cli('status', '--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toMatch(/^Usage: durable-agent status \[options\] <id>/);
    expect(help.out).toContain('--json');
    expect((await cli('help', 'status')).out).toBe(help.out);
    const ask = await cli('ask', '--help');
    for (const flag of ['--cwd <dir>', '--permission-mode <mode>', '--output-format <format>', '--continue', '--resume <id>', '--max-budget-usd <n>']) {
      expect(ask.out).toContain(flag);
    }
    expect(ask.out).not.toContain('--allowedTools'); // accepted, as Claude Code's spelling, but listed once
    expect((await cli('mcp', 'approve', '--help')).out).toMatch(/Usage: durable-agent mcp approve \[options\] <id> <server\.\.\.>/);
  });

  it('lists every command in the top-level help', async () => {
    const { code, out } = await cli('--help');
    expect(code).toBe(0);
    for (const command of [
      'ask',
      'start',
      'chat',
      'send',
      'list',
      'status',
      'transcript',
      'compact',
      'checkpoints',
      'rewind',
      'fork',
      'approve',
      'deny',
      'abort',
      'end',
      'upgrade',
      'mcp',
      'cron',
      'worker',
      'server',
      'codec-server',
    ]) {
      expect(out).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    expect(out).toContain("Claude Code's spellings work too");
    // No command at all: the same help, as a usage mistake.
    expect(await cli()).toMatchObject({ code: 2, err: expect.stringContaining('Commands:') });
  });

  it('suggests the command or option meant, and names a missing argument', async () => {
    const typo = await cli('statsu', 'x');
    expect(typo.code).toBe(2);
    expect(typo.err).toContain("Unknown command 'statsu'");
    expect(typo.err).toContain('Did you mean status?');
    const option = await cli('list', '--stauts', 'running');
    expect(option).toMatchObject({ code: 2, err: expect.stringContaining('Did you mean --status?') });
    expect(option.err).toContain('Run `durable-agent list --help` for usage.');
    expect(await cli('send', 'abc')).toMatchObject({ code: 2, err: expect.stringContaining("send: missing required argument 'prompt'") });
    expect(await cli('approve', 'abc')).toMatchObject({ code: 2, err: expect.stringContaining("approve: missing required argument 'toolUseId'") });
    expect(await cli('start')).toMatchObject({ code: 2, err: expect.stringContaining("start: missing required argument 'prompt' (or give --resume <id>)") });
    expect(await cli('chat', 'fix', 'the', 'bug')).toMatchObject({ code: 2, err: expect.stringContaining('quote an argument that has spaces') });
    expect(await cli('rewind', 'abc', '--to')).toMatchObject({ code: 2, err: expect.stringContaining("option '--to <n>' argument missing") });
    expect(await cli('mcp', 'aprove', 'x', 'y')).toMatchObject({ code: 2, err: expect.stringContaining('Did you mean approve?') });
  });

  it('keeps version and the server flags', async () => {
    for (const argv of [['--version'], ['-v'], ['version']])
      expect(await cli(...argv)).toMatchObject({ code: 0, out: expect.stringMatching(/^\d+\.\d+\.\d+ \(durable-agent\)\n$/) });
    expect(await cli('server', '--port', '70000')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--port must be a port number (1–65535), got "70000"'),
    });
    expect(await cli('server', '--ui-port', 'x')).toMatchObject({ code: 2, err: expect.stringContaining('--ui-port must be a port number') });
    expect(await cli('server', '--postgres', '--port', '7234')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--port and --ui-port are for the dev server'),
    });
  });
});

describe('hints', () => {
  it("name the command the way it was run: `npm run cli --` under the README's npm script, else durable-agent", async () => {
    const { invocationName } = await import('../../client/invocation');
    expect(invocationName({ npm_lifecycle_event: 'cli', npm_package_name: 'durable-agent' })).toBe('npm run cli --');
    expect(invocationName({ npm_lifecycle_event: 'npx', npm_package_name: 'durable-agent' })).toBe('durable-agent');
    expect(invocationName({})).toBe('durable-agent');
    process.env.npm_lifecycle_event = 'cli';
    process.env.npm_package_name = 'durable-agent';
    expect((await cli('status')).err).toContain('Run `npm run cli -- status --help` for usage.');
  });
});

describe('the conversation config from the command line', () => {
  it('a one-shot ask takes no checkpoint before its prompt (it ends with its result: nothing can rewind to it); start and chat do', async () => {
    const { configFrom } = await import('../../client/command-line');
    expect(configFrom({}, true).checkpoints).toBe(false);
    expect(configFrom({}, false)).not.toHaveProperty('checkpoints');
  });
});
