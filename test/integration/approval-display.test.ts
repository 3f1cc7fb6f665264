/**
 * The approval shows what is approved (issue 29, item 5; class 8), end to end on the dev server
 * with a real worker: a command longer than the status query carries (it cuts fields at 1,000
 * characters) is shown whole by `status` and `approve`, its bidi control and escape sequence
 * visible (chat's question in a real terminal: test/integration/chat.test.ts).
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { showInvisibleCharacters } from '../../common/visible-text';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );
const RLO = '\u202E';
const ESC = '\u001b';

/** A command of `length` characters that touches `file`; a right-to-left override and a screen-clearing escape early, the action at the very end. */
function longCommand(length: number, file: string): string {
  const head = `echo "${RLO}gnp.tpircs ${ESC}[2J${ESC}[H" > /dev/null; # `;
  const tail = ` padding\ntouch ${file}`;
  return `${head}${'x'.repeat(length - head.length - tail.length)}${tail}`;
}

/** The command back from displayed lines: `│ ` starts one of its lines, `↳ ` continues one. */
function commandFrom(lines: readonly string[]): string {
  let text = '';
  for (const line of lines) {
    const started = /^ *│ (.*)$/.exec(line);
    const continued = /^ *↳ (.*)$/.exec(line);
    if (started) text += `\n${started[1]}`;
    else if (continued) text += continued[1];
  }
  return text.slice(1);
}

describe('the approval shows what is approved', () => {
  it("status and approve show a 1,500-character command whole (past the status query's cut), U+202E and ESC visible", async () => {
    const command = longCommand(1_500, 'approved-long.txt');
    harness = await createHarness({
      script: [{ content: [{ type: 'tool_use', id: 'toolu_long_1', name: 'Bash', input: { command } }] }, { content: [{ type: 'text', text: 'Touched it.' }] }],
    });
    await harness.startWorker();
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'touch it',
      config: harness.config({ permissions: {} }),
      taskQueue: harness.taskQueue,
    });
    const waiting = await eventually(
      () => harness!.api.status(conversationId),
      (status) => (status.pendingPermissions ?? []).some((request) => request.toolUseId === 'toolu_long_1'),
    );
    // The status query itself carries a cut command.
    expect((waiting.pendingPermissions![0].input as { command: string }).command).toMatch(/… \(1500 characters\)$/);

    const shown = showInvisibleCharacters(command);
    const status = await cli('status', conversationId);
    expect(status.code).toBe(0);
    expect(status.out).toContain('permission    toolu_long_1  Bash  waiting since');
    expect(commandFrom(status.out.split('\n'))).toBe(shown);
    expect(status.out).toContain('⟨U+202E⟩gnp.tpircs ⟨U+001B⟩[2J⟨U+001B⟩[H');
    // The running call's summary may stay cut (`tools` line); what waits for approval is whole.
    expect(status.out.slice(status.out.indexOf('permission    toolu_long_1'))).not.toContain('…');
    expect(status.out).not.toContain(RLO);
    expect(status.out).not.toContain(ESC);

    const approved = await cli('approve', conversationId, 'toolu_long_1');
    expect(approved.code).toBe(0);
    expect(approved.out.split('\n').slice(0, 2)).toEqual(['Bash toolu_long_1 allowed', '  Bash']);
    expect(commandFrom(approved.out.split('\n'))).toBe(shown);
    await harness.api.waitForResult(conversationId, inputUuid!);
    expect(await exists(path.join(harness.workspace, 'approved-long.txt'))).toBe(true);
  }, 120_000);
});
