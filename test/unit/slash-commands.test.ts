/**
 * Slash commands (seed §2.10 processUserInput): the parser, custom command files and their
 * argument expansion, the texts local commands print, `/model` validation, and the transcript's
 * `/clear` with the local-command records the model never sees.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandFile } from '../../activities/custom-commands';
import { type CustomCommand, commandNameOf } from '../../common/custom-commands';
import { type UserMessage, buildApiMessages } from '../../common/messages';
import { resolveModelName } from '../../common/models';
import { validateMessagesRequest } from '../../testing/messages-api-validator';
import {
  expandCommandArguments,
  helpText,
  isSlashCommand,
  localCommandRecord,
  parseSlashCommand,
  resolveSlashCommand,
  splitArguments,
  unknownCommandText,
} from '../../workflows/input/slash-commands';
import { Transcript } from '../../workflows/transcript';
import { formatEvent } from '../../client/format';

const review = (overrides: Partial<CustomCommand> = {}): CustomCommand => ({
  name: 'review',
  description: 'Review a file',
  body: 'Review $ARGUMENTS carefully.',
  scope: 'project',
  source: '/w/.claude/commands/review.md',
  ...overrides,
});

describe('parseSlashCommand', () => {
  it('takes the name and the rest as arguments', () => {
    expect(parseSlashCommand('/help')).toEqual({ name: 'help', args: '' });
    expect(parseSlashCommand('  /compact   keep the API notes  ')).toEqual({ name: 'compact', args: 'keep the API notes' });
    expect(parseSlashCommand('/frontend:test a\nb')).toEqual({ name: 'frontend:test', args: 'a\nb' });
    expect(parseSlashCommand('/model claude-opus-4-5')).toEqual({ name: 'model', args: 'claude-opus-4-5' });
  });

  it('leaves text that only looks like a command to the model', () => {
    for (const text of ['hello /help', '/usr/bin/env is missing', '/', '/ space first', '//comment', 'fix src/a.ts']) {
      expect(parseSlashCommand(text)).toBeUndefined();
      expect(isSlashCommand(text)).toBe(false);
    }
  });
});

describe('resolveSlashCommand', () => {
  it('built-in commands are local; custom ones expand; the rest is unknown', () => {
    expect(resolveSlashCommand({ name: 'clear', args: '' }, [review()])).toEqual({ type: 'local', command: 'clear', args: '' });
    expect(resolveSlashCommand({ name: 'COST', args: '' })).toMatchObject({ type: 'local', command: 'cost' });
    expect(resolveSlashCommand({ name: 'review', args: 'a.ts' }, [review()])).toMatchObject({ type: 'prompt', prompt: 'Review a.ts carefully.' });
    expect(resolveSlashCommand({ name: 'nope', args: 'x' }, [review()])).toEqual({ type: 'unknown', name: 'nope', args: 'x' });
  });

  it('a custom command cannot shadow a built-in one', () => {
    expect(resolveSlashCommand({ name: 'clear', args: '' }, [review({ name: 'clear' })])).toMatchObject({ type: 'local' });
  });
});

describe('expandCommandArguments', () => {
  it('substitutes $ARGUMENTS and $1…$9 (quotes group words)', () => {
    expect(expandCommandArguments('Fix issue #$ARGUMENTS now', '123 urgent')).toBe('Fix issue #123 urgent now');
    expect(expandCommandArguments('PR $1 by $2, priority $3', '456 "Ada Lovelace" high')).toBe('PR 456 by Ada Lovelace, priority high');
    expect(expandCommandArguments('Only $1 and $2', 'one')).toBe('Only one and ');
    expect(splitArguments(`a 'b c' "d e" f`)).toEqual(['a', 'b c', 'd e', 'f']);
  });

  it('appends the arguments when the template uses none, so they are never lost', () => {
    expect(expandCommandArguments('Review the diff.', 'focus on tests')).toBe('Review the diff.\n\nARGUMENTS: focus on tests');
    expect(expandCommandArguments('Review the diff.', '')).toBe('Review the diff.');
  });
});

describe('custom command files', () => {
  it('names files by path: a subdirectory is a namespace', () => {
    expect(commandNameOf('review.md')).toBe('review');
    expect(commandNameOf('frontend/test.md')).toBe('frontend:test');
    expect(commandNameOf('notes.txt')).toBeUndefined();
    expect(commandNameOf('bad name.md')).toBeUndefined();
  });

  it('reads the front matter Claude Code defines', () => {
    const text = `---\ndescription: Create a commit\nargument-hint: [message]\nmodel: claude-haiku-4-5\nallowed-tools: Bash(git add:*), Bash(git commit:*)\n---\nCommit with message: $ARGUMENTS\n`;
    expect(parseCommandFile(text, 'commit', 'user', '/h/.claude/commands/commit.md')).toEqual({
      name: 'commit',
      description: 'Create a commit',
      argumentHint: '[message]',
      model: 'claude-haiku-4-5',
      allowedTools: ['Bash(git add:*)', 'Bash(git commit:*)'],
      body: 'Commit with message: $ARGUMENTS',
      scope: 'user',
      source: '/h/.claude/commands/commit.md',
    });
  });

  it('without front matter the first line describes it; an unclosed one is an error', () => {
    expect(parseCommandFile('# Optimize\nFind slow code.', 'optimize', 'project', 'o.md')).toMatchObject({
      description: 'Optimize',
      body: '# Optimize\nFind slow code.',
    });
    expect(parseCommandFile('---\nmodel: inherit\n---\nx', 'x', 'project', 'x.md').model).toBeUndefined();
    expect(() => parseCommandFile('---\ndescription: never closed\nbody', 'y', 'project', 'y.md')).toThrow(
      /y\.md: the front matter opened with --- is never closed/,
    );
  });
});

describe('texts of local commands', () => {
  it('/help lists built-in and custom commands with their hints', () => {
    const help = helpText([review({ argumentHint: '<file>' })]);
    for (const name of ['/help', '/clear', '/compact [instructions]', '/cost', '/status', '/model [model]', '/review <file> — Review a file (project)']) {
      expect(help).toContain(name);
    }
  });

  it('an unknown command is named, with the list', () => {
    const text = unknownCommandText('deploy', [review()]);
    expect(text).toContain('Unknown command: /deploy');
    expect(text).toContain('/help, /clear, /compact, /rewind, /cost, /status, /model, /tasks, /mcp, /review');
  });
});

describe('resolveModelName (/model)', () => {
  it('takes known model ids and aliases, and says why anything else is not one', () => {
    expect(resolveModelName('claude-opus-4-7')).toEqual({ model: 'claude-opus-4-7' });
    expect(resolveModelName('claude-sonnet-5')).toEqual({ model: 'claude-sonnet-5' });
    expect(resolveModelName('haiku')).toEqual({ model: 'claude-haiku-4-5' });
    for (const bad of ['gpt-4o', 'claude-unknown-1', 'claude opus', '']) {
      expect(resolveModelName(bad)).toMatchObject({ problem: expect.stringContaining('is not a model the API serves') });
    }
  });
});

describe('the transcript with slash commands', () => {
  const user = (uuid: string, content: string, extra: Partial<UserMessage> = {}): UserMessage => ({
    type: 'user',
    uuid,
    message: { role: 'user', content },
    ...extra,
  });
  const record = (uuid: string) =>
    user(uuid, localCommandRecord('cost', '', 'Total cost: $0.0000'), { isMeta: true, command: { name: 'cost', args: '', kind: 'local' } });

  it('/clear empties it and restarts the digest chain; the listener hears from 0', () => {
    const transcript = new Transcript([user('u1', 'hello'), user('u2', 'again')]);
    const heard: Array<[number, number]> = [];
    transcript.onChange((from, messages) => heard.push([from, messages.length]));
    transcript.clear();
    expect(transcript.length).toBe(0);
    expect(heard).toEqual([[0, 0]]);
    transcript.append(user('u3', 'fresh'));
    expect(transcript.ref()).toEqual(new Transcript([user('u3', 'fresh')]).ref());
  });

  it('local command records stay out of the request, and the request stays valid', () => {
    const messages = buildApiMessages([record('r0'), user('u1', 'first prompt'), record('r1')].concat(user('u2', 'second')), 'ctx');
    expect(JSON.stringify(messages)).not.toContain('local-command-stdout');
    expect(messages).toHaveLength(1);
    expect(validateMessagesRequest({ model: 'claude-sonnet-4-6', max_tokens: 100, messages }, 'messages')).toBeUndefined();
  });
});

describe('the CLI shows a local command', () => {
  it("prints the command's output, also when the feed cut the record", () => {
    const event = (content: string) => ({
      seq: 0,
      message: {
        type: 'user' as const,
        uuid: 'r',
        isMeta: true,
        command: { name: 'help', args: '', kind: 'local' as const },
        message: { role: 'user' as const, content },
      },
    });
    expect(formatEvent(event(localCommandRecord('help', '', 'Commands:\n  /help')))).toBe('Commands:\n  /help');
    expect(formatEvent(event(`${localCommandRecord('help', '', 'x'.repeat(50)).slice(0, 90)}… (3000 characters)`))).toMatch(/^x+… \(3000 characters\)$/);
  });
});
