/**
 * A conversation in a git worktree (issue 33 item 4): EnterWorktree makes one of the working
 * directory's repository (`.claude/worktrees/<name>`, branch `worktree-<name>`; activities/worktrees.ts)
 * and moves the conversation's working directory into it; ExitWorktree moves it back, keeping the
 * worktree or removing it (refusing, and listing them, when it has changes unless told to discard
 * them); `--worktree [name]` enters one before the first prompt. The part owns the carried slice
 * (where the worktree is, where the conversation came from), so every later run works there too.
 */
import { uuid4 } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../common/messages';
import { enterWorktreeInputSchema } from '../../common/tools/enter-worktree';
import { exitWorktreeInputSchema } from '../../common/tools/exit-worktree';
import { type WorktreeSessionState, derivedWorktreeName, refusedRemovalText, worktreeWhere } from '../../common/worktrees';
import { type WorktreeHooks, makeWorktree, removeWorktree } from '../worktrees';
import type { ConversationStatus } from '../definitions';
import type { ToolOutcome, ToolRoute } from '../deps/tool-routes';
import type { PartContext, SessionPart } from './session-part';

export class WorktreeSession implements SessionPart {
  readonly name = 'worktree session';
  private state: WorktreeSessionState | undefined;
  readonly routes: readonly ToolRoute[] = [
    { name: 'EnterWorktree', takes: (block) => block.name === 'EnterWorktree', run: (call) => this.enterTool(call.block) },
    { name: 'ExitWorktree', takes: (block) => block.name === 'ExitWorktree', run: (call) => this.exitTool(call.block) },
  ];

  constructor(
    private readonly host: PartContext,
    carried: WorktreeSessionState | undefined,
    /** WorktreeCreate / WorktreeRemove (issue 33 item 5). */
    private readonly hooks?: WorktreeHooks,
  ) {
    this.state = carried && { ...carried };
  }

  /** The worktree's directory while the conversation is in one. */
  get cwd(): string | undefined {
    return this.state?.worktree.path;
  }

  carried(): { worktreeSession?: WorktreeSessionState } {
    return this.state ? { worktreeSession: { ...this.state } } : {};
  }

  /** For `status`: where the conversation works, when in a worktree. */
  status(): Pick<ConversationStatus, 'worktree'> {
    return this.state ? { worktree: { path: this.state.worktree.path, branch: this.state.worktree.branch, originalCwd: this.state.originalCwd } } : {};
  }

  /** `--worktree [name]`: the conversation starts in a new worktree (a name made from the conversation's id when none is given). */
  async startIn(name: string): Promise<void> {
    if (this.state) return;
    const entered = await this.enter(name === '' ? derivedWorktreeName('session', this.host.conversationId) : name);
    this.host.pushEvent({ type: 'system', uuid: uuid4(), level: entered.isError ? 'warning' : 'info', content: entered.content });
  }

  private async enterTool(block: ToolUseBlock): Promise<ToolOutcome> {
    const parsed = enterWorktreeInputSchema.safeParse(block.input);
    if (!parsed.success) return { isError: true, content: `Invalid EnterWorktree input: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
    // Made from the call's id: a retried or replayed call finds the worktree its first attempt made.
    return this.enter(parsed.data.name ?? derivedWorktreeName('session', block.id));
  }

  private async enter(name: string): Promise<ToolOutcome> {
    if (this.state) {
      return {
        isError: true,
        content: `Already in a worktree session (${worktreeWhere(this.state.worktree)}). Use ExitWorktree first.`,
      };
    }
    const originalCwd = this.host.config.cwd;
    // WorktreeCreate hooks (issue 33 item 5), when configured, make it instead of git.
    const made = await makeWorktree(this.hooks, this.host.config, name);
    if ('problem' in made) return { isError: true, content: made.problem };
    this.state = { worktree: made.worktree, originalCwd };
    await this.moveTo(made.worktree.path);
    return {
      isError: false,
      content: `Created worktree at ${worktreeWhere(made.worktree)}. The session is now working in the worktree. Use ExitWorktree to leave mid-session.`,
    };
  }

  private async exitTool(block: ToolUseBlock): Promise<ToolOutcome> {
    const parsed = exitWorktreeInputSchema.safeParse(block.input);
    if (!parsed.success) return { isError: true, content: `Invalid ExitWorktree input: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
    const current = this.state;
    if (!current) {
      return {
        isError: true,
        content:
          'No active EnterWorktree session to exit. This tool only operates on the worktree this session entered (EnterWorktree or --worktree); nothing was changed.',
      };
    }
    const { worktree, originalCwd } = current;
    if (parsed.data.action === 'keep') {
      await this.leave(originalCwd);
      return {
        isError: false,
        content: `Exited worktree. Your work is preserved at ${worktreeWhere(worktree)}. The session is back in ${originalCwd}.`,
      };
    }
    // WorktreeRemove hooks (issue 33 item 5) run when it is removed (workflows/worktrees.ts).
    const closed = await removeWorktree(this.hooks, this.host.config, worktree, parsed.data.discard_changes === true);
    if (closed.action === 'left') {
      await this.leave(originalCwd);
      return {
        isError: false,
        content: `Exited worktree. It was made by a WorktreeCreate hook and no WorktreeRemove hook is configured, so it is left at ${worktree.path}. The session is back in ${originalCwd}.`,
      };
    }
    if (closed.action === 'kept') return { isError: true, content: refusedRemovalText(worktree, closed.changes) };
    if (closed.action === 'failed')
      return { isError: true, content: `Could not remove worktree ${worktree.path}: ${closed.problem}. The session is still in it.` };
    await this.leave(originalCwd);
    return {
      isError: false,
      content: `Exited and removed worktree ${worktree.path}${worktree.madeByHook ? ' (by its WorktreeRemove hooks)' : ` and its branch ${worktree.branch}`}. The session is back in ${originalCwd}.`,
    };
  }

  private async leave(originalCwd: string): Promise<void> {
    this.state = undefined;
    await this.moveTo(originalCwd);
  }

  /** The conversation works in `cwd` from now on; CwdChanged hooks (issue 33) are told. */
  private async moveTo(cwd: string): Promise<void> {
    const before = this.host.config.cwd;
    this.host.moveWorkingDirectory(cwd);
    if (before !== cwd) await this.hooks?.cwdChanged?.(before, cwd);
  }
}
