import { describe, expect, it } from 'vitest';
import type { PendingInput } from '../../workflows/definitions';
import { takenByRunningQuery } from '../../workflows/session/input-queue';
import { isSlashCommand } from '../../workflows/input/slash-commands';

const typed = (prompt: string): PendingInput => ({ prompt, uuid: prompt });
const fromCron = (prompt: string): PendingInput => ({ prompt, uuid: prompt, origin: 'cron' });
const notification = (prompt: string): PendingInput => ({ prompt, uuid: prompt, origin: 'task-notification' });
/** Today's rule: slash commands and cron prompts wait for a query of their own. */
const waits = (input: PendingInput) => isSlashCommand(input.prompt) || input.origin === 'cron';

describe('what a running query takes between turns (seed §2.2 ⑦)', () => {
  it('takes typed prompts and task notifications', () => {
    expect(takenByRunningQuery([typed('also check the tests'), notification('<task-notification>…')], waits)).toBe(2);
  });

  it('leaves a cron job’s prompt for a query of its own (Claude Code fires jobs only while idle), and what came after it behind it', () => {
    expect(takenByRunningQuery([typed('one more thing'), fromCron('run the standup report'), typed('and this')], waits)).toBe(1);
    expect(takenByRunningQuery([fromCron('run the standup report')], waits)).toBe(0);
  });

  it('leaves a slash command for its own turn', () => {
    expect(takenByRunningQuery([typed('first'), typed('/compact'), typed('after')], waits)).toBe(1);
  });

  it('takes everything when nothing waits, and nothing from an empty queue', () => {
    expect(takenByRunningQuery([typed('/compact'), fromCron('job')], () => false)).toBe(2);
    expect(takenByRunningQuery([], waits)).toBe(0);
  });
});
