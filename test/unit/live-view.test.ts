import { describe, expect, it } from 'vitest';
import { coalesce } from '../../activities/live-publisher';
import { LiveTextPrinter, RESTORE_AND_CLEAR, SAVE_CURSOR } from '../../client/live-printer';
import { type LiveEntry, LiveView, type ViewOp, streamedMatches } from '../../client/live-view';
import type { ResultMessage } from '../../common/result';
import type { ModelAttempt } from '../../common/stream-items';
import { slimForStream, trimStreamState } from '../../workflows/ui/live-stream';

const call = (attempt: number, fallback = 0, requestId = 'r1'): ModelAttempt => ({ requestId, attempt, fallback });
let offset = 0;
const text = (c: ModelAttempt, value: string, index = 0): LiveEntry => ({
  kind: 'model',
  offset: offset++,
  item: { type: 'text_delta', call: c, index, text: value },
});
const assistant = (...texts: string[]): LiveEntry => ({
  kind: 'event',
  offset: offset++,
  event: {
    seq: 0,
    message: {
      type: 'assistant',
      uuid: 'u',
      message: {
        id: 'm',
        role: 'assistant',
        model: 'x',
        content: texts.map((t) => ({ type: 'text' as const, text: t })),
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    } as never,
  },
});

function run(entries: LiveEntry[]): ViewOp[] {
  const view = new LiveView();
  return entries.flatMap((entry) => view.apply(entry));
}

function visible(ops: ViewOp[]): string {
  let shown = '';
  for (const op of ops) {
    if (op.op === 'text') shown += op.text;
    if (op.op === 'retract') shown = shown.slice(0, shown.length - op.text.length);
  }
  return shown;
}

describe('LiveView', () => {
  it('streams text and ends it when the message matches', () => {
    const ops = run([text(call(1), 'Hel'), text(call(1), 'lo'), assistant('Hello')]);
    expect(ops.map((op) => op.op)).toEqual(['text', 'text', 'text_end', 'event']);
    expect(ops.at(-1)).toMatchObject({ op: 'event', textShown: true });
  });

  it('takes back a retried attempt and ignores its late items', () => {
    const ops = run([text(call(1), 'partial'), text(call(2), 'Final'), text(call(1), ' late'), assistant('Final')]);
    expect(ops.filter((op) => op.op === 'retract')).toEqual([{ op: 'retract', text: 'partial' }]);
    expect(visible(ops)).toBe('Final');
  });

  it('takes back the main model’s text when the fallback model answers', () => {
    const ops = run([text(call(3, 0), 'overloaded half'), text(call(1, 1, 'r2'), 'From the fallback'), assistant('From the fallback')]);
    expect(visible(ops)).toBe('From the fallback');
  });

  it('ignores an older attempt arriving after a newer one started', () => {
    const ops = run([text(call(2), 'new'), text(call(1), 'old'), assistant('new')]);
    expect(ops.some((op) => op.op === 'retract')).toBe(false);
    expect(visible(ops)).toBe('new');
  });

  it('lets the message win when it differs from what streamed', () => {
    const ops = run([text(call(1), 'abandoned'), assistant('What the model said')]);
    expect(ops.map((op) => op.op)).toEqual(['text', 'retract', 'event']);
    expect(ops.at(-1)).toMatchObject({ textShown: false });
  });

  it('keeps an interrupted answer when the query ends without its message', () => {
    const result: LiveEntry = { kind: 'event', offset: offset++, event: { seq: 1, message: { type: 'result', result: '' } as never } };
    const ops = run([text(call(1), 'half an answer'), result, text(call(1), ' late')]);
    expect(ops.map((op) => op.op)).toEqual(['text', 'text_end', 'event']);
    expect(visible(ops)).toBe('half an answer');
  });

  it('separates text blocks with a blank line', () => {
    const ops = run([text(call(1), 'One', 0), text(call(1), 'Two', 2), assistant('One', 'Two')]);
    expect(visible(ops)).toBe('One\n\nTwo');
    expect(ops.some((op) => op.op === 'text_end')).toBe(true);
  });
});

describe('streamedMatches', () => {
  it('accepts a block the feed cut to its head', () => {
    const long = 'x'.repeat(3000);
    expect(streamedMatches(long, [{ text: `${'x'.repeat(2000)}… (3000 characters)` }])).toBe(true);
    expect(streamedMatches(long.slice(1), [{ text: `${'x'.repeat(2000)}… (3000 characters)` }])).toBe(false);
    expect(streamedMatches('a\n\nb', [{ text: 'a' }, { text: 'b' }])).toBe(true);
    expect(streamedMatches('ab', [{ text: 'a' }, { text: 'b' }])).toBe(false);
  });
});

describe('LiveTextPrinter', () => {
  const result = (text: string) => ({ result: text }) as ResultMessage;
  it('erases an abandoned attempt and does not print the answer twice', () => {
    let out = '';
    const printer = new LiveTextPrinter((t) => (out += t));
    for (const entry of [text(call(1), 'half'), text(call(2), 'Whole.'), assistant('Whole.')]) printer.onLive(entry);
    printer.finish(result('Whole.'));
    expect(out).toBe(`${SAVE_CURSOR}half${RESTORE_AND_CLEAR}${SAVE_CURSOR}Whole.\n`);
  });
  it('prints the result when nothing streamed', () => {
    let out = '';
    const printer = new LiveTextPrinter((t) => (out += t));
    printer.finish(result('Answer'));
    expect(out).toBe('Answer\n');
  });
});

describe('coalesce (activity side)', () => {
  it('merges deltas of one block and keeps only the newest progress tail', () => {
    const last = { topic: 'model', value: { type: 'text_delta' as const, call: call(1), index: 0, text: 'a' } };
    expect(coalesce(last, { topic: 'model', value: { type: 'text_delta', call: call(1), index: 0, text: 'b' } })).toBe(true);
    expect(last.value.text).toBe('ab');
    expect(coalesce(last, { topic: 'model', value: { type: 'text_delta', call: call(1), index: 1, text: 'c' } })).toBe(false);
    const progress = { topic: 'tools', value: { type: 'tool_progress' as const, toolUseId: 't', tail: 'one' } };
    expect(coalesce(progress, { topic: 'tools', value: { type: 'tool_progress', toolUseId: 't', tail: 'one two' } })).toBe(true);
    expect(progress.value.tail).toBe('one two');
  });
});

describe('trimStreamState', () => {
  it('keeps the tail within the limits and moves the base offset', () => {
    const state = {
      log: ['a', 'bb', 'ccc', 'dddd'].map((data) => ({ topic: 't', data, offset: 0 })),
      base_offset: 10,
      publisher_sequences: {},
      publisher_last_seen: {},
    };
    expect(trimStreamState(state, 2, 1000)).toMatchObject({ base_offset: 12, log: [{ data: 'ccc' }, { data: 'dddd' }] });
    expect(trimStreamState(state, 10, 9)).toMatchObject({ base_offset: 12, log: [{ data: 'ccc' }, { data: 'dddd' }] });
    expect(trimStreamState(state, 10, 1000).base_offset).toBe(10);
  });
});

describe('slimForStream', () => {
  it('cuts a huge prompt (a poll answer must stay under the update size limit)', () => {
    const slim = slimForStream({ seq: 0, message: { type: 'user_input', uuid: 'u', prompt: 'abc '.repeat(475_000) } });
    expect(JSON.stringify(slim).length).toBeLessThan(3_000);
    expect((slim.message as { prompt: string }).prompt).toMatch(/… \(1900000 characters\)$/);
  });

  it('cuts tool results and large tool inputs, and keeps texts', () => {
    const long = 'y'.repeat(1000);
    const user = {
      seq: 1,
      message: {
        type: 'user',
        uuid: 'u',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: `${'z'.repeat(2000)}… (4096 characters)` }] },
      },
    } as never;
    const slim = slimForStream(user) as unknown as { message: { message: { content: Array<{ content: string }> } } };
    expect(slim.message.message.content[0].content).toBe(`${'z'.repeat(300)}… (4096 characters)`);
    const assistant = {
      seq: 2,
      message: {
        type: 'assistant',
        uuid: 'a',
        message: {
          content: [
            { type: 'text', text: long },
            { type: 'tool_use', id: 't', name: 'Write', input: { content: long } },
          ],
        },
      },
    } as never;
    const slimmed = slimForStream(assistant) as unknown as { message: { message: { content: Array<{ text?: string; input?: { truncated?: string } }> } } };
    expect(slimmed.message.message.content[0].text).toBe(long);
    expect(slimmed.message.message.content[1].input?.truncated).toMatch(/… \(\d+ characters\)$/);
  });
});
