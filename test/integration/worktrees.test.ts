/**
 * Worktrees (issue 33 item 4), on a real dev server, real worker processes, real git and the
 * scripted model: in one message a foreground and a background Agent with `isolation: "worktree"`
 * edit the same file name side by side, each in its own worktree of the workspace's repository
 * (`.claude/worktrees/agent-<call id>`, branch `worktree-agent-<call id>`), and a third isolated
 * agent changes nothing. The worker is SIGKILLed while the foreground agent answers; after the
 * restart both finish with their edits in their own worktrees, the clean one's worktree is
 * removed, the kept ones' paths and branches are reported, and the main checkout is untouched.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8' }).trim();
const toolNames = (request: RecordedRequest): string[] => request.body.tools.map((tool: { name: string }) => tool.name);
const isChild = (request: RecordedRequest) => !toolNames(request).includes('Agent');
const firstPrompt = (request: RecordedRequest) => JSON.stringify(request.body.messages[0]?.content ?? '');
const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '');
const workingDirectory = (request: RecordedRequest) => /Working directory: ([^\s"\\]+)/.exec(JSON.stringify(request.body.system))?.[1];
const text = (value: string): ScriptedTurn => ({ content: [{ type: 'text', text: value }] });
const agentCall = (id: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool_use' as const,
  id,
  name: 'Agent',
  input: { description: `task ${id}`, prompt, subagent_type: 'general-purpose', isolation: 'worktree', ...extra },
});
const write = (id: string, content: string, file = 'notes.txt'): ScriptedTurn => ({
  content: [{ type: 'tool_use', id, name: 'Write', input: { file_path: file, content } }],
});

describe('worktrees', () => {
  it('a foreground and a background isolated agent edit notes.txt in parallel, each in its own worktree, across a worker SIGKILL', async () => {
    let foregroundAnswers = 0;
    const childDirectories = new Map<string, string | undefined>();
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) {
          const prompt = firstPrompt(request);
          const task = prompt.includes('FG-TASK') ? 'fg' : prompt.includes('BG-TASK') ? 'bg' : 'clean';
          childDirectories.set(task, workingDirectory(request));
          const wrote = lastUserText(request).includes('tool_result');
          if (task === 'clean') return text('Nothing needed changing.');
          if (task === 'bg') return wrote ? text('The background agent edited notes.txt.') : write('toolu_bgwrite', 'edited by the background agent\n');
          if (!wrote) return write('toolu_fgwrite', 'edited by the foreground agent\n');
          foregroundAnswers++;
          // Slow enough that the worker dies while it streams.
          return { content: [{ type: 'text', text: 'The foreground agent edited notes.txt.' }], deltaDelayMs: 200, chunkSize: 4 };
        }
        const last = lastUserText(request);
        if (last.includes('<task-notification>')) return text('Noted the background agent.');
        if (last.includes('tool_result')) return text('Parent done.');
        return {
          content: [
            agentCall('toolu_fg', 'FG-TASK: write notes.txt.'),
            agentCall('toolu_bg', 'BG-TASK: write notes.txt.', { run_in_background: true }),
            agentCall('toolu_clean', 'CLEAN-TASK: look, change nothing.'),
          ],
        };
      },
    });
    const workspace = harness.workspace;
    git(workspace, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(workspace, 'notes.txt'), 'original\n');
    git(workspace, 'add', 'notes.txt');
    git(workspace, 'commit', '--quiet', '-m', 'first');
    const head = git(workspace, 'rev-parse', 'HEAD');
    const worktreeOf = (id: string) => path.join(workspace, '.claude', 'worktrees', `agent-${id}`);

    const first = await harness.spawnWorkerProcess();
    const started = await harness.api.start({ prompt: 'Edit notes.txt in parallel.', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      async () => foregroundAnswers,
      (count) => count >= 1,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    // The worktree and the child's progress survived the crash: its edit is there before any worker runs again.
    expect(readFileSync(path.join(worktreeOf('toolu_fg'), 'notes.txt'), 'utf8')).toBe('edited by the foreground agent\n');
    await harness.spawnWorkerProcess();

    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success' });
    // The background agent's answer arrives as a notification naming its worktree (in the first query or a second).
    const transcriptText = await eventually(
      async () => JSON.stringify(await harness!.api.transcript(started.conversationId)),
      (transcript) => transcript.includes('<worktreePath>'),
      120_000,
    );
    expect(transcriptText).toContain(`<worktreePath>${worktreeOf('toolu_bg')}</worktreePath>`);
    expect(transcriptText).toContain('<worktreeBranch>worktree-agent-toolu_bg</worktreeBranch>');
    await eventually(
      () => harness!.api.status(started.conversationId),
      (status) => status.phase === 'awaiting_input',
    );

    // Each child worked in its own worktree (its working directory), cut from the checkout's HEAD.
    expect(childDirectories.get('fg')).toBe(worktreeOf('toolu_fg'));
    expect(childDirectories.get('bg')).toBe(worktreeOf('toolu_bg'));
    expect(childDirectories.get('clean')).toBe(worktreeOf('toolu_clean'));
    const transcript = await harness.api.transcript(started.conversationId);
    const toolResult = (toolUseId: string): string =>
      JSON.stringify(
        transcript
          .flatMap((entry) => (entry.type === 'user' && Array.isArray(entry.message.content) ? entry.message.content : []))
          .find((block) => block.type === 'tool_result' && block.tool_use_id === toolUseId),
      ) ?? '';
    // The foreground agent's result: kept, with its path and branch.
    expect(toolResult('toolu_fg')).toContain('kept with its changes');
    expect(toolResult('toolu_fg')).toContain(`worktreePath: ${worktreeOf('toolu_fg')}`);
    expect(toolResult('toolu_fg')).toContain('worktreeBranch: worktree-agent-toolu_fg');
    // The agent that changed nothing: its worktree and branch are gone.
    expect(toolResult('toolu_clean')).toContain('made no changes');
    expect(existsSync(worktreeOf('toolu_clean'))).toBe(false);
    expect(git(workspace, 'branch', '--list', 'worktree-agent-toolu_clean')).toBe('');

    // The conversation ends: the background agent is stopped and its worktree, which has changes, kept.
    await harness.api.end(started.conversationId);
    await harness.client.workflow.getHandle(started.conversationId).result();
    expect(readFileSync(path.join(worktreeOf('toolu_fg'), 'notes.txt'), 'utf8')).toBe('edited by the foreground agent\n');
    expect(readFileSync(path.join(worktreeOf('toolu_bg'), 'notes.txt'), 'utf8')).toBe('edited by the background agent\n');
    for (const id of ['toolu_fg', 'toolu_bg']) {
      expect(git(worktreeOf(id), 'branch', '--show-current')).toBe(`worktree-agent-${id}`);
      expect(git(worktreeOf(id), 'merge-base', 'HEAD', 'main')).toBe(head);
    }
    // The main checkout is untouched: its file, its branch, nothing tracked changed.
    expect(readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe('original\n');
    expect(git(workspace, 'branch', '--show-current')).toBe('main');
    expect(git(workspace, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(workspace, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  });
});

describe('worktrees: SendMessage to a finished isolated agent', () => {
  it('continues it in the worktree it kept', async () => {
    const directories: Array<string | undefined> = [];
    harness = await createHarness({
      respond: (request) => {
        const last = lastUserText(request);
        if (isChild(request)) {
          directories.push(workingDirectory(request));
          if (last.includes('toolu_first') || last.includes('toolu_second')) return text('Wrote it.');
          if (last.includes('Also write more.txt')) return write('toolu_second', 'more\n', 'more.txt');
          return write('toolu_first', 'first\n');
        }
        if (last.includes('toolu_send')) return text('Both written.');
        if (last.includes('toolu_iso'))
          return { content: [{ type: 'tool_use', id: 'toolu_send', name: 'SendMessage', input: { to: 'task toolu_iso', message: 'Also write more.txt' } }] };
        return { content: [agentCall('toolu_iso', 'ISO-TASK: write notes.txt.')] };
      },
    });
    const workspace = harness.workspace;
    git(workspace, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(workspace, 'notes.txt'), 'original\n');
    git(workspace, 'add', 'notes.txt');
    git(workspace, 'commit', '--quiet', '-m', 'first');
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'Isolated, then continued.', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ result: 'Both written.' });
    const worktree = path.join(workspace, '.claude', 'worktrees', 'agent-toolu_iso');
    expect(directories.length).toBeGreaterThanOrEqual(3);
    expect(new Set(directories)).toEqual(new Set([worktree]));
    expect(readFileSync(path.join(worktree, 'notes.txt'), 'utf8')).toBe('first\n');
    expect(readFileSync(path.join(worktree, 'more.txt'), 'utf8')).toBe('more\n');
    expect(existsSync(path.join(workspace, 'more.txt'))).toBe(false);
    await harness.api.end(started.conversationId);
  });
});

describe('EnterWorktree, ExitWorktree and --worktree', () => {
  const repositoryIn = (workspace: string) => {
    git(workspace, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(workspace, 'notes.txt'), 'original\n');
    git(workspace, 'add', 'notes.txt');
    git(workspace, 'commit', '--quiet', '-m', 'first');
  };
  const toolUse = (id: string, name: string, input: Record<string, unknown>): ScriptedTurn => ({ content: [{ type: 'tool_use', id, name, input }] });
  const resultOf = (request: RecordedRequest, id: string): string | undefined => {
    const content = request.body.messages.at(-1)?.content;
    const block = Array.isArray(content) ? content.find((candidate: { tool_use_id?: string }) => candidate.tool_use_id === id) : undefined;
    return block && JSON.stringify(block.content);
  };

  it('EnterWorktree moves the working directory into a new worktree; ExitWorktree refuses to remove it with changes, keeps it and moves back', async () => {
    const seen: Record<string, string | undefined> = {};
    harness = await createHarness({
      respond: (request) => {
        const step = ['toolu_exit_keep', 'toolu_exit_remove', 'toolu_write', 'toolu_enter', 'toolu_back'].find((id) => resultOf(request, id) !== undefined);
        if (step) seen[step] = resultOf(request, step);
        switch (step) {
          case undefined:
            return toolUse('toolu_enter', 'EnterWorktree', { name: 'feature-x' });
          case 'toolu_enter':
            return toolUse('toolu_write', 'Write', { file_path: 'notes.txt', content: 'in the worktree\n' });
          case 'toolu_write':
            return toolUse('toolu_exit_remove', 'ExitWorktree', { action: 'remove' });
          case 'toolu_exit_remove':
            return toolUse('toolu_exit_keep', 'ExitWorktree', { action: 'keep' });
          case 'toolu_exit_keep':
            return toolUse('toolu_back', 'Write', { file_path: 'back.txt', content: 'in the main checkout\n' });
          default:
            return text('Done.');
        }
      },
    });
    const workspace = harness.workspace;
    repositoryIn(workspace);
    const worktree = path.join(workspace, '.claude', 'worktrees', 'feature-x');
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'Work in a worktree.', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'Done.' });

    expect(seen.toolu_enter).toContain(`Created worktree at ${worktree} on branch worktree-feature-x`);
    // The relative path resolved in the worktree, and was judged there (an ordinary file, not a protected `.claude` one).
    expect(readFileSync(path.join(worktree, 'notes.txt'), 'utf8')).toBe('in the worktree\n');
    expect(seen.toolu_exit_remove).toContain('has changes');
    expect(seen.toolu_exit_remove).toContain('notes.txt');
    expect(seen.toolu_exit_keep).toContain(`Your work is preserved at ${worktree} on branch worktree-feature-x`);
    // Back in the main checkout: its notes.txt untouched, the next Write there.
    expect(readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe('original\n');
    expect(readFileSync(path.join(workspace, 'back.txt'), 'utf8')).toBe('in the main checkout\n');
    expect(existsSync(path.join(worktree, 'back.txt'))).toBe(false);
    expect(git(worktree, 'branch', '--show-current')).toBe('worktree-feature-x');
    await harness.api.end(started.conversationId);
  });

  it('--worktree starts the conversation in a new worktree: its session context, Write and Bash are there', async () => {
    const directories: Array<string | undefined> = [];
    harness = await createHarness({
      respond: (request) => {
        directories.push(workingDirectory(request));
        if (lastUserText(request).includes('toolu_again')) return text('Again.');
        if (lastUserText(request).includes('Once more.'))
          return { content: [{ type: 'tool_use', id: 'toolu_again', name: 'Write', input: { file_path: 'again.txt', content: 'next run\n' } }] };
        if (lastUserText(request).includes('toolu_bash')) return text('Written.');
        if (lastUserText(request).includes('toolu_w'))
          return {
            content: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: "printf 'by bash\\n' > bash.txt && git status --porcelain" } }],
          };
        return { content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'notes.txt', content: 'from --worktree\n' } }] };
      },
    });
    const workspace = harness.workspace;
    repositoryIn(workspace);
    await harness.startWorker();
    // Continue-as-new after every query: the next run works in the worktree too (the part's carried slice).
    const config = harness.config({ worktree: 'from-flag', continueAsNewAfterEvents: 1 });
    const started = await harness.api.start({ prompt: 'Edit notes.', config, taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'Written.' });
    const worktree = path.join(workspace, '.claude', 'worktrees', 'from-flag');
    expect(directories[0]).toBe(worktree);
    expect(readFileSync(path.join(worktree, 'notes.txt'), 'utf8')).toBe('from --worktree\n');
    // Bash runs there too (its sandbox's writable root is the worktree), and git sees the worktree's changes.
    expect(readFileSync(path.join(worktree, 'bash.txt'), 'utf8')).toBe('by bash\n');
    const bashResult = JSON.stringify(harness.model.requests.at(-1)!.body.messages.at(-1).content);
    expect(bashResult).toContain('M notes.txt');
    expect(bashResult).toContain('?? bash.txt');
    expect(readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe('original\n');
    expect(git(worktree, 'branch', '--show-current')).toBe('worktree-from-flag');

    const second = await harness.api.send(started.conversationId, 'Once more.');
    expect(await harness.api.waitForResult(started.conversationId, second)).toMatchObject({ result: 'Again.' });
    const status = await harness.api.status(started.conversationId);
    expect(status.continuedAsNewCount).toBeGreaterThanOrEqual(1);
    expect(status.worktree).toEqual({ path: worktree, branch: 'worktree-from-flag', originalCwd: workspace });
    expect(readFileSync(path.join(worktree, 'again.txt'), 'utf8')).toBe('next run\n');
    expect(existsSync(path.join(workspace, 'again.txt'))).toBe(false);
    await harness.api.end(started.conversationId);
  });
});

describe('WorktreeCreate and WorktreeRemove hooks (issue 33 item 5)', () => {
  it("the user's WorktreeCreate hook makes an isolated agent's worktree and EnterWorktree's instead of git (no repository needed); WorktreeRemove removes them; CwdChanged hears the moves", async () => {
    const { mkdtemp, rm, mkdir, writeFile, readFile } = await import('node:fs/promises');
    const os = await import('node:os');
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-wt-hooks-'));
    const home = path.join(root, 'home');
    const made = path.join(root, 'made');
    const log = path.join(root, 'log.jsonl');
    try {
      await mkdir(path.join(home, '.claude'), { recursive: true });
      // The hooks read their event on stdin, as Claude Code's do: create prints the new directory, remove deletes it.
      const script = (body: string) =>
        `node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{const fs=require("fs");const e=JSON.parse(s);fs.appendFileSync(${JSON.stringify(log)},JSON.stringify(e)+"\\n");${body}})'`;
      await writeFile(
        path.join(home, '.claude', 'settings.json'),
        JSON.stringify({
          hooks: {
            WorktreeCreate: [
              { hooks: [{ type: 'command', command: script(`const p=${JSON.stringify(made)}+"/"+e.name;fs.mkdirSync(p,{recursive:true});console.log(p)`) }] },
            ],
            WorktreeRemove: [{ hooks: [{ type: 'command', command: script('fs.rmSync(e.worktree_path,{recursive:true,force:true})') }] }],
            CwdChanged: [{ hooks: [{ type: 'command', command: script('') }] }],
          },
        }),
      );
      const results: Record<string, string | undefined> = {};
      const childDirectories: Array<string | undefined> = [];
      harness = await createHarness({
        respond: (request) => {
          const last = lastUserText(request);
          if (isChild(request)) {
            childDirectories.push(workingDirectory(request));
            return last.includes('toolu_childwrite') ? text('Wrote it.') : write('toolu_childwrite', 'by the isolated agent\n');
          }
          for (const id of ['toolu_exit', 'toolu_enter', 'toolu_agent']) {
            const content = request.body.messages.at(-1)?.content;
            const block = Array.isArray(content) ? content.find((candidate: { tool_use_id?: string }) => candidate.tool_use_id === id) : undefined;
            if (block) {
              results[id] = JSON.stringify(block.content);
              if (id === 'toolu_agent') return { content: [{ type: 'tool_use', id: 'toolu_enter', name: 'EnterWorktree', input: { name: 'hooked' } }] };
              if (id === 'toolu_enter') return { content: [{ type: 'tool_use', id: 'toolu_exit', name: 'ExitWorktree', input: { action: 'remove' } }] };
              return text('Done.');
            }
          }
          return { content: [agentCall('toolu_agent', 'HOOKED-TASK: write notes.txt.')] };
        },
      });
      await harness.startWorker({ activityDeps: { home } });
      const started = await harness.api.start({ prompt: 'Worktrees by hooks.', config: harness.config(), taskQueue: harness.taskQueue });
      expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'Done.' });

      const agentWorktree = path.join(made, 'agent-toolu_agent');
      expect(new Set(childDirectories)).toEqual(new Set([agentWorktree]));
      expect(results.toolu_agent).toContain('a WorktreeCreate hook made; the WorktreeRemove hooks removed it');
      expect(results.toolu_enter).toContain(`Created worktree at ${path.join(made, 'hooked')} (made by a WorktreeCreate hook)`);
      expect(results.toolu_exit).toContain('(by its WorktreeRemove hooks)');
      const events = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(events).toMatchObject([
        { hook_event_name: 'WorktreeCreate', name: 'agent-toolu_agent', session_id: started.conversationId },
        { hook_event_name: 'WorktreeRemove', worktree_path: agentWorktree },
        { hook_event_name: 'WorktreeCreate', name: 'hooked' },
        { hook_event_name: 'CwdChanged', old_cwd: harness.workspace, new_cwd: path.join(made, 'hooked'), cwd: path.join(made, 'hooked') },
        { hook_event_name: 'WorktreeRemove', worktree_path: path.join(made, 'hooked') },
        { hook_event_name: 'CwdChanged', old_cwd: path.join(made, 'hooked'), new_cwd: harness.workspace },
      ]);
      // Removed by the hooks; git never ran (the workspace is no repository).
      expect(existsSync(agentWorktree)).toBe(false);
      expect(existsSync(path.join(made, 'hooked'))).toBe(false);
      expect(existsSync(path.join(harness.workspace, '.git'))).toBe(false);
      await harness.api.end(started.conversationId);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);
});
