/**
 * SendMessage to a FINISHED agent (issue 21 item 3), on a real dev server and worker with the
 * scripted model: a foreground Agent call's child ends with its answer; SendMessage to it reads
 * the closed child's transcript and continues it in a new child (`<child>--msg-1`) whose request
 * holds the first prompt and answer; a second SendMessage continues from that child; an unknown
 * `to` is a clear error result.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { subagentWorkflowId } from '../../workflows/subagents';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const toolNames = (request: RecordedRequest): string[] => request.body.tools.map((tool: { name: string }) => tool.name);
/** A child's requests do not offer Agent; the parent's do. */
const isChild = (request: RecordedRequest) => !toolNames(request).includes('Agent');
const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '');
const text = (value: string): ScriptedTurn => ({ content: [{ type: 'text', text: value }] });
const sendMessage = (id: string, to: string, message: string): ScriptedTurn => ({
  content: [{ type: 'tool_use', id, name: 'SendMessage', input: { to, message } }],
});
const toolResultFor = (toolUseId: string) =>
  harness!.model.requests
    .filter((request) => !isChild(request))
    .flatMap((request) => (Array.isArray(request.body.messages.at(-1)?.content) ? request.body.messages.at(-1).content : []))
    .find((block: { type?: string; tool_use_id?: string }) => block.type === 'tool_result' && block.tool_use_id === toolUseId);

describe('SendMessage to a finished agent', () => {
  it('continues a foreground agent with its transcript, twice, and refuses an unknown agent', async () => {
    harness = await createHarness({
      respond: (request) => {
        const last = lastUserText(request);
        if (isChild(request)) {
          if (last.includes('And the .json files?')) return text('No .json files.');
          if (last.includes('And the .md files?')) return text('Besides the 2 .txt files, there is 1 .md file.');
          return text('There are 2 .txt files.');
        }
        // The agent id the foreground Agent result named.
        const agentId = /agentId: (a[0-9a-f]{8})/.exec(JSON.stringify(request.body.messages))?.[1] ?? 'missing';
        if (last.includes('toolu_send1')) return text('It says there is 1 .md file too.');
        if (last.includes('toolu_send2')) return text('No json.');
        if (last.includes('toolu_send3')) return text('Nobody there.');
        if (last.includes('toolu_fg')) return text('Counted.');
        if (last.includes('Ask it about .md')) return sendMessage('toolu_send1', 'count files', 'And the .md files?');
        if (last.includes('Ask it about .json')) return sendMessage('toolu_send2', agentId, 'And the .json files?');
        if (last.includes('Ask nobody')) return sendMessage('toolu_send3', 'nobody', 'Hello?');
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_fg',
              name: 'Agent',
              input: { description: 'count files', prompt: 'Count the .txt files.', subagent_type: 'general-purpose' },
            },
          ],
        };
      },
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Count files.');
    expect(result).toMatchObject({ subtype: 'success', result: 'Counted.' });
    const firstChild = subagentWorkflowId(conversationId, 'toolu_fg');
    expect((await harness.client.workflow.getHandle(firstChild).describe()).status.name).toBe('COMPLETED');
    const launched = toolResultFor('toolu_fg');
    expect(launched.content).toMatch(/^There are 2 \.txt files\.\n\nagentId: a[0-9a-f]{8} /);
    const agentId = /agentId: (a[0-9a-f]{8})/.exec(launched.content)![1];

    // SendMessage (by description) to the finished agent: a new child, its transcript intact.
    const second = await harness.api.send(conversationId, 'Ask it about .md files.');
    expect(await harness.api.waitForResult(conversationId, second)).toMatchObject({ result: 'It says there is 1 .md file too.' });
    expect(toolResultFor('toolu_send1')).toMatchObject({ tool_use_id: 'toolu_send1', content: 'Besides the 2 .txt files, there is 1 .md file.' });
    const followUp = harness.model.requests.filter(isChild).find((request) => lastUserText(request).includes('And the .md files?'))!;
    expect(JSON.stringify(followUp.body.messages)).toContain('Count the .txt files.');
    expect(JSON.stringify(followUp.body.messages)).toContain('There are 2 .txt files.');
    expect((await harness.client.workflow.getHandle(`${firstChild}--msg-1`).describe()).status.name).toBe('COMPLETED');

    // A second SendMessage (by id) continues from the newest child: both earlier exchanges are there.
    const third = await harness.api.send(conversationId, 'Ask it about .json files.');
    expect(await harness.api.waitForResult(conversationId, third)).toMatchObject({ result: 'No json.' });
    expect(toolResultFor('toolu_send2')).toMatchObject({ tool_use_id: 'toolu_send2', content: 'No .json files.' });
    expect(agentId).toBeDefined();
    const secondFollowUp = harness.model.requests.filter(isChild).find((request) => lastUserText(request).includes('And the .json files?'))!;
    const context = JSON.stringify(secondFollowUp.body.messages);
    for (const earlier of ['Count the .txt files.', 'There are 2 .txt files.', 'And the .md files?', 'Besides the 2 .txt files, there is 1 .md file.'])
      expect(context).toContain(earlier);
    expect((await harness.client.workflow.getHandle(`${firstChild}--msg-2`).describe()).status.name).toBe('COMPLETED');

    // An unknown `to`: a clear error result, no child started.
    const childrenBefore = harness.model.requests.filter(isChild).length;
    const fourth = await harness.api.send(conversationId, 'Ask nobody.');
    expect(await harness.api.waitForResult(conversationId, fourth)).toMatchObject({ result: 'Nobody there.' });
    expect(toolResultFor('toolu_send3')).toMatchObject({ is_error: true, content: expect.stringContaining('No background agent "nobody"') });
    expect(toolResultFor('toolu_send3').content).toContain(agentId);
    expect(harness.model.requests.filter(isChild)).toHaveLength(childrenBefore);
    for (const request of harness.model.requests) expectValidApiOrder(request);
  });
});
