/**
 * The permission prompt inline in `durable-agent chat` (issue 10): when the conversation (or one
 * of its subagents) waits for a decision, chat shows the tool, a short summary of its input and
 * why it asks, and offers Claude Code's menu (yes / yes and don't ask again / no, and tell Claude
 * what to do differently: the text typed goes back as the denial's message); the answer goes out as the `decidePermission` update
 * (always: an allow rule for the session). Several waiting requests are asked one after another.
 * A request decided elsewhere (`approve` in another terminal, an abort) stops being asked; an
 * answer that arrives second gets the recorded decision back, which is shown.
 */
import { colorWanted } from './render/terminal-text';
import type { PendingPermission } from '../workflows/permissions/types';
import type { ConversationClient } from './api';
import { collectPending, decide, permissionQuestionLines } from './commands/permissions';
import { sanitizeForTerminal } from './format';
import { SerialRecheck } from './serial-recheck';

/** How often an open question checks that its request is still waiting. */
const STILL_WAITING_POLL_MS = 500;

/** One entry of an arrow-key menu. `asksText`: picking it opens a text input with this placeholder. */
export interface ChatChoice {
  label: string;
  value: string;
  asksText?: string;
}

export interface ChatPermissionIo {
  /** Prints one line (chat starts it on a fresh line). */
  print(line: string): void;
  /**
   * An arrow-key menu under `title` (Enter or a digit picks, Esc: undefined); the text typed for
   * an `asksText` choice comes with it. Rejects once `signal` aborts (the menu is taken away).
   */
  choose(title: string, choices: ChatChoice[], signal: AbortSignal): Promise<{ value: string; text?: string } | undefined>;
}

/** Claude Code's three answers to a permission request. */
export function permissionChoices(toolName: string): ChatChoice[] {
  return [
    { label: 'Yes', value: 'allow' },
    { label: `Yes, and don't ask again for ${toolName} this session`, value: 'always' },
    { label: 'No, and tell Claude what to do differently (esc)', value: 'deny', asksText: 'what to do instead (Enter sends; empty: just no)' },
  ];
}

export class ChatPermissionPrompter {
  private readonly asked = new Set<string>();
  private readonly recheck: SerialRecheck;
  /** The open question: its request and how to withdraw it. */
  private open: { toolUseId: string | undefined; withdraw: () => void } | undefined;

  constructor(
    private readonly api: ConversationClient,
    private readonly conversationId: string,
    private readonly io: ChatPermissionIo,
    private readonly leaving: AbortSignal,
  ) {
    this.recheck = new SerialRecheck(
      () => this.askWaiting(),
      (error) => this.io.print(`Permission prompt: ${error instanceof Error ? error.message : String(error)}`),
      leaving,
    );
  }

  /** Looks for waiting requests and asks each one not asked yet; calls while it runs look again after. */
  check(): void {
    this.recheck.request();
  }

  /**
   * The live channel says a request is over (its tool ended, or the query's result arrived:
   * no toolUseId): an open question about it is withdrawn without waiting for the next poll.
   */
  settled(toolUseId?: string): void {
    if (this.open && (toolUseId === undefined || this.open.toolUseId === toolUseId)) this.open.withdraw();
  }

  private async askWaiting(): Promise<void> {
    const waiting = await collectPending(this.api, this.conversationId);
    for (const { workflowId, request } of waiting) {
      if (this.leaving.aborted) return;
      if (this.asked.has(request.toolUseId)) continue;
      this.asked.add(request.toolUseId);
      await this.askOne(workflowId, request);
    }
  }

  private async askOne(workflowId: string, request: PendingPermission): Promise<void> {
    const subagent = workflowId === this.conversationId ? '' : ' (subagent)';
    // The preview's lines are safe already (invisible characters shown, the diff's own colours only).
    const [question, ...preview] = permissionQuestionLines(request, subagent, undefined, colorWanted());
    this.io.print([sanitizeForTerminal(question), ...preview].join('\n'));
    const settled = new AbortController();
    const onLeave = () => settled.abort();
    this.leaving.addEventListener('abort', onLeave, { once: true });
    let decidedElsewhere = false;
    const withdraw = () => {
      decidedElsewhere = true;
      settled.abort();
    };
    const watching = this.watch(workflowId, request.toolUseId, settled.signal).then((gone) => gone && withdraw());
    // A subagent's request ends with the parent's query; its tool ids are not on the parent's channel.
    this.open = { toolUseId: workflowId === this.conversationId ? request.toolUseId : undefined, withdraw };
    try {
      // A menu that cannot be shown (the terminal closed) is a no, as before; Esc is a no too.
      const picked = await this.io.choose('Do you want to proceed?', permissionChoices(request.toolName), settled.signal).catch(() => undefined);
      const answer = settled.signal.aborted ? undefined : (picked?.value ?? 'deny');
      this.open = undefined;
      settled.abort(); // stop watching: from here on the update tells what was decided
      if (decidedElsewhere) {
        this.io.print(
          sanitizeForTerminal(`${request.toolName} ${request.toolUseId} is no longer waiting (decided in another terminal, or the query was aborted)`),
        );
        return;
      }
      if (answer === undefined) return; // leaving
      const { line } = await decide(this.api, workflowId, request.toolUseId, answer === 'deny' ? 'deny' : 'allow', {
        always: answer === 'always',
        message: answer === 'deny' ? picked?.text : undefined,
      });
      this.io.print(sanitizeForTerminal(line));
    } catch (error) {
      // The request ended between the answer and the update (an abort): say so and go on.
      this.io.print(sanitizeForTerminal(`${request.toolName} ${request.toolUseId}: ${error instanceof Error ? error.message : String(error)}`));
    } finally {
      this.open = undefined;
      settled.abort();
      this.leaving.removeEventListener('abort', onLeave);
      await watching;
    }
  }

  /** Resolves true once the request no longer waits, false when `signal` aborts first. */
  private async watch(workflowId: string, toolUseId: string, signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      // One abort listener per wait, removed when the wait ends (one left behind per poll was the
      // MaxListenersExceededWarning of issue 32 after ~5 s).
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, STILL_WAITING_POLL_MS);
        signal.addEventListener('abort', done, { once: true });
      });
      if (signal.aborted) return false;
      const status = await this.api.status(workflowId).catch(() => undefined);
      if (signal.aborted) return false;
      if (status && !(status.pendingPermissions ?? []).some((request) => request.toolUseId === toolUseId)) return true;
    }
    return false;
  }
}
