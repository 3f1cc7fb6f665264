/**
 * `liveRead` (workflows/ui/live-stream.ts): what a reader following a busy conversation gets by
 * query instead of a long poll — the items from an offset, cut at a byte budget.
 */
import { describe, expect, it } from 'vitest';
import { readLog } from '../../workflows/ui/live-stream';

const entry = (topic: string, text: string) => ({ topic, payload: { data: new TextEncoder().encode(text) } });
const decode = (payload: { data?: Uint8Array | null }) => new TextDecoder().decode(payload.data ?? new Uint8Array());

describe('readLog', () => {
  const log = [entry('events', 'a'), entry('model', 'bb'), entry('tools', 'ccc')];

  it('answers the items from an offset, with their global offsets, and where to go on', () => {
    expect(readLog(log, 10, 11, decode)).toEqual({
      items: [
        { topic: 'model', offset: 11, data: 'bb' },
        { topic: 'tools', offset: 12, data: 'ccc' },
      ],
      nextOffset: 13,
      moreReady: false,
    });
  });

  it('answers nothing new at the end, and the same offset back', () => {
    expect(readLog(log, 10, 13, decode)).toEqual({ items: [], nextOffset: 13, moreReady: false });
    expect(readLog([], 0, 0, decode)).toEqual({ items: [], nextOffset: 0, moreReady: false });
  });

  it('starts at the oldest kept item when the offset was trimmed away (continue-as-new keeps a tail)', () => {
    expect(readLog(log, 10, 3, decode).items.map((item) => item.offset)).toEqual([10, 11, 12]);
  });

  it('cuts the answer at the byte budget and says more is ready; one item always goes', () => {
    // Sizes: payload bytes + topic length: 7, 7, 8.
    expect(readLog(log, 0, 0, decode, 14)).toEqual({
      items: [
        { topic: 'events', offset: 0, data: 'a' },
        { topic: 'model', offset: 1, data: 'bb' },
      ],
      nextOffset: 2,
      moreReady: true,
    });
    expect(readLog(log, 0, 0, decode, 1).items).toHaveLength(1);
  });
});
