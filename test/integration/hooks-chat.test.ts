/**
 * `durable-agent chat` in a real terminal (tmux) shows hook messages (issue 22 §4): a hook's
 * `systemMessage`, what a hook told the model, and a PreToolUse block, as feed lines.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatReady, killTerminals, screen, startTerminal, tmux } from '../helpers/tmux';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

describe('chat shows hook messages', () => {
  it('a systemMessage, a hook’s context for the model and a PreToolUse block appear in the chat', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf build' } }] },
        { content: [{ type: 'text', text: 'The hook stopped me.' }] },
      ],
    });
    await mkdir(path.join(harness.workspace, '.claude'), { recursive: true });
    const hooks = {
      UserPromptSubmit: [
        {
          hooks: [
            {
              type: 'command',
              command: `cat > /dev/null; echo '{"systemMessage":"Prompt logged by the audit hook","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Ticket ABC-12"}}'`,
            },
          ],
        },
      ],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'cat > /dev/null; echo "rm is off limits" >&2; exit 2' }] }],
    };
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), JSON.stringify({ hooks }));
    await harness.startWorker();

    // Issue 29: chat asks once whether to trust the folder (its hooks apply only then); the answer is kept in this HOME.
    const home = await mkdtemp(path.join(os.tmpdir(), 'hooks-chat-home-'));
    const command = [
      `HOME=${home}`,
      `TEMPORAL_ADDRESS=${harness.address}`,
      `DURABLE_AGENT_TASK_QUEUE=${harness.taskQueue}`,
      process.execPath,
      path.join(REPO_ROOT, 'bin', 'durable-agent.js'),
      'chat',
      '--cwd',
      harness.workspace,
      '--permission-mode',
      'bypassPermissions',
      '; echo "[chat exited $?]"; sleep 600',
    ].join(' ');
    const terminal = startTerminal('hooks-chat', command);
    const question = await eventually(
      async () => screen(terminal),
      (text) => text.includes('Answer 1 or 2:'),
      90_000,
    );
    expect(question).toContain(`Do you trust the files in this folder? ${harness.workspace}`);
    expect(question).toContain('It has settings of its own: 2 hooks from .claude/settings.json.');
    tmux('send-keys', '-t', terminal, '1', 'Enter');
    await eventually(async () => screen(terminal), chatReady, 90_000);
    expect(JSON.parse(await readFile(path.join(home, '.claude.json'), 'utf8'))).toEqual({
      projects: { [harness.workspace]: { hasTrustDialogAccepted: true } },
    });
    tmux('send-keys', '-t', terminal, 'clean the build', 'Enter');
    const shown = await eventually(
      async () => screen(terminal),
      (text) => text.includes('The hook stopped me.'),
      60_000,
    );
    expect(shown).toContain('[info] Prompt logged by the audit hook');
    expect(shown).toContain('[info] UserPromptSubmit hook additional context: Ticket ABC-12');
    expect(shown).toContain('PreToolUse:Bash hook error');
    expect(shown).toContain('rm is off limits');
  }, 180_000);
});
