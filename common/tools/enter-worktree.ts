/**
 * EnterWorktree tool spec (Claude Code's, issue 33 item 4): makes a git worktree of the working
 * directory's repository (`.claude/worktrees/<name>`, branch `worktree-<name>` from HEAD) and moves
 * the conversation's working directory into it. Answered in the workflow (workflows/session/worktree-session.ts). Pure.
 */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const enterWorktreeInputSchema = z.strictObject({
  name: z
    .string()
    .optional()
    .describe(
      'Optional name for the worktree: letters, digits, dots, underscores and dashes; 64 characters at most. Without it, a name is made from this call.',
    ),
});

export type EnterWorktreeInput = z.infer<typeof enterWorktreeInputSchema>;

export const enterWorktreeToolSpec = defineTool({
  name: 'EnterWorktree',
  permission: 'none',
  description: `Use this tool ONLY when the user explicitly asks to work in a worktree. It creates an isolated git worktree and switches the current session into it.

## When to use
- The user explicitly says "worktree" (e.g. "start a worktree", "work in a worktree", "create a worktree").

## When NOT to use
- The user asks to create or switch branches: use git commands instead.
- The user asks to fix a bug or build a feature: use the normal git workflow unless they mention worktrees.

## Requirements
- The working directory is in a git repository with at least one commit.
- The session is not already in a worktree.

## Behavior
- Creates a new git worktree inside \`.claude/worktrees/\` of the repository, on a new branch \`worktree-<name>\` based on HEAD.
- Switches the session's working directory to the new worktree: tools act there, relative paths resolve there.
- Use ExitWorktree to leave the worktree (keep or remove it).`,
  inputSchema: enterWorktreeInputSchema,
  // It makes a directory and a branch, and moves the working directory.
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `EnterWorktree${input.name ? ` ${input.name}` : ''}`,
});
