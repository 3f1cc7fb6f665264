/**
 * ExitWorktree tool spec (Claude Code's, issue 33 item 4): leaves the worktree EnterWorktree (or
 * `--worktree`) made, keeping or removing it, and moves the working directory back. Answered in
 * the workflow (workflows/session/worktree-session.ts). Pure.
 */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const exitWorktreeInputSchema = z.strictObject({
  action: z.enum(['keep', 'remove']).describe('"keep" leaves the worktree and branch on disk; "remove" deletes both.'),
  discard_changes: z
    .boolean()
    .optional()
    .describe(
      'Required true when action is "remove" and the worktree has uncommitted files or unmerged commits. The tool will refuse and list them otherwise.',
    ),
});

export type ExitWorktreeInput = z.infer<typeof exitWorktreeInputSchema>;

export const exitWorktreeToolSpec = defineTool({
  name: 'ExitWorktree',
  permission: 'none',
  description: `Exit a worktree session created by EnterWorktree (or --worktree) and return the session to the original working directory.

## Scope
This tool ONLY operates on the worktree this session entered. It will NOT touch worktrees made with \`git worktree add\`, worktrees of other sessions, or the directory you are in when no worktree was entered: then it reports that no worktree session is active and changes nothing.

## When to use
- The user explicitly asks to exit or leave the worktree, or to go back. Do not call it proactively.

## Parameters
- \`action\` (required): "keep" leaves the worktree directory and branch on disk (to come back to, or to preserve changes); "remove" deletes the worktree directory and its branch.
- \`discard_changes\` (optional, default false): only with "remove". If the worktree has uncommitted files or commits not on the original branch, the tool REFUSES to remove it unless this is true. If it lists changes, confirm with the user before calling again with \`discard_changes: true\`.

## Behavior
- Restores the session's working directory to where it was before EnterWorktree.
- Once exited, EnterWorktree can be called again for a fresh worktree.`,
  inputSchema: exitWorktreeInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `ExitWorktree (${input.action})`,
});
