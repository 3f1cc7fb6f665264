/**
 * A subagent tells its parent what it is doing (the parent's feed shows it): the first line of
 * each reply or its tool calls, and permission requests. Best effort — a parent that is gone or
 * busy must not fail the child — but settled before the child completes, since a signal still in
 * flight then is dropped by the server.
 */
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import { type Message, textOf } from '../../common/messages';
import type { ResultMessage } from '../../common/result';
import type { SubagentOrigin } from '../definitions';
import { backgroundAgentFinishedSignal, subagentProgressSignal } from '../definitions';

export class SubagentReporting {
  private readonly inFlight = new Set<Promise<void>>();

  /** `origin`: set when this conversation is a subagent; otherwise nothing is reported. */
  constructor(private readonly origin: SubagentOrigin | undefined) {}

  /** A message of the child's query: an assistant reply becomes one line. */
  reportMessage(message: Message): void {
    if (!this.origin || message.type !== 'assistant' || message.apiError) return;
    const tools = message.message.content.filter((block) => block.type === 'tool_use').map((block) => (block as { name: string }).name);
    const text =
      textOf(message)
        .split('\n')
        .find((line) => line.trim() !== '')
        ?.trim() ?? '';
    const line = tools.length > 0 ? `${text ? `${text.slice(0, 120)} ` : ''}● ${tools.join(', ')}` : text.slice(0, 200);
    if (!line) return;
    this.report(line);
  }

  /** One progress line to the parent. */
  report(line: string): void {
    if (!this.origin) return;
    const { parentId, toolUseId, description } = this.origin;
    this.track(getExternalWorkflowHandle(parentId).signal(subagentProgressSignal, { toolUseId, description, line }));
  }

  /**
   * A background agent's answer (one per query, `seq` its number) goes to the parent's workflow id
   * — it survives the parent's continue-as-new — which takes it once (workflows/background/agents.ts).
   */
  reportAnswer(result: ResultMessage, seq: number): void {
    const agentId = this.origin?.background?.agentId;
    if (!this.origin || !agentId) return;
    const { is_error: isError, usage, total_cost_usd: costUsd, modelUsage } = result;
    this.track(
      getExternalWorkflowHandle(this.origin.parentId).signal(backgroundAgentFinishedSignal, {
        agentId,
        seq,
        result: result.result,
        isError,
        usage,
        costUsd,
        ...(modelUsage && { modelUsage }),
      }),
    );
  }

  private track(signal: Promise<void>): void {
    const sent = signal.catch(() => undefined);
    this.inFlight.add(sent);
    void sent.then(() => this.inFlight.delete(sent));
  }

  /** Waits until the parent has every progress report. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
