/** SendMessage to a finished agent: the transcript it is continued with (common/agent-transcript.ts), pure. */
import { describe, expect, it } from 'vitest';
import { transcriptToContinue } from '../../common/agent-transcript';
import type { TranscriptMessage } from '../../common/messages';

const user = (text: string): TranscriptMessage => ({ type: 'user', uuid: `u-${text}`, message: { role: 'user', content: text } }) as TranscriptMessage;
const boundary: TranscriptMessage = {
  type: 'compact_boundary',
  uuid: 'b',
  trigger: 'auto',
  preTokens: 100,
  postTokens: 10,
  messagesSummarized: 2,
  timestamp: 0,
};

describe('transcriptToContinue', () => {
  it('takes the whole transcript when it was never compacted', () => {
    const messages = [user('a'), user('b')];
    expect(transcriptToContinue('child', messages, 1_000_000)).toEqual({ messages, bytes: JSON.stringify(messages).length });
  });

  it('takes the last compact boundary and what follows, as start --resume does', () => {
    const result = transcriptToContinue('child', [user('old'), boundary, user('summary'), user('new')], 1_000_000);
    expect('messages' in result && result.messages.map((message) => message.uuid)).toEqual(['b', 'u-summary', 'u-new']);
  });

  it('refuses a transcript over the cap, saying how large it is and what to do', () => {
    const result = transcriptToContinue('child', [user('x'.repeat(2_000))], 1_000);
    expect(result).toEqual({
      problem: expect.stringMatching(/child.* is 0\.0 MB since its last compaction, more than an agent can be continued with .*Start a new agent/),
    });
  });

  it('refuses an empty transcript', () => {
    expect(transcriptToContinue('child', [], 1_000)).toEqual({ problem: expect.stringContaining('no messages') });
  });
});

describe('closedBy (watchAgentWorkflow): how a watched agent’s child ended, from its result’s failure', () => {
  it('names termination, cancellation, timeout, failure and a deleted workflow; anything else is not a close', async () => {
    const { closedBy } = await import('../../activities/agent-transcript');
    const { WorkflowFailedError, WorkflowNotFoundError } = await import('@temporalio/client');
    const { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } = await import('@temporalio/common');
    const failed = (cause: Error) => new WorkflowFailedError('Workflow execution failed', cause, 'NON_RETRYABLE_FAILURE' as never);
    expect(closedBy(failed(new TerminatedFailure('stopped from outside')))).toEqual({ status: 'terminated', message: 'stopped from outside' });
    expect(closedBy(failed(new CancelledFailure('cancelled')))).toMatchObject({ status: 'cancelled' });
    expect(closedBy(failed(new TimeoutFailure('timed out', undefined, 'START_TO_CLOSE' as never)))).toMatchObject({ status: 'timed_out' });
    expect(closedBy(failed(ApplicationFailure.create({ message: 'boom' })))).toEqual({ status: 'failed', message: 'boom' });
    expect(closedBy(new WorkflowNotFoundError('gone', 'wf', undefined))).toMatchObject({ status: 'gone' });
    expect(closedBy(new Error('connection refused'))).toBeUndefined();
  });
});
