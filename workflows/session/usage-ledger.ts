/**
 * The one usage and cost ledger of a conversation: the session's totals (usage, cost), the
 * running query's share of them (from the totals when it started), its API time, and its
 * per-model usage and structured output (`QueryAccounting`). Model calls, compactions and
 * subagents all record here; results, `/cost`, the budget limit and the UI read from here.
 */
import type { ConversationConfig } from '../../common/config';
import { costOfUsage } from '../../common/cost';
import { EMPTY_USAGE, type Usage, addUsage, subtractUsage } from '../../common/messages';
import type { ModelUsage, Terminal } from '../../common/result';
import type { QueryInProgress } from '../definitions';
import { QueryAccounting } from '../query/accounting';

export class UsageLedger {
  private sessionUsage: Usage;
  private sessionCostUsd: number;
  /** The totals when the running (or last) query started. */
  private usageBefore: Usage;
  private costBefore: number;
  private apiMs = 0;
  /** The running (or last) query's usage per model, structured output and limits. */
  private queryAccounting: QueryAccounting;

  constructor(
    private readonly config: ConversationConfig,
    carried: { usage?: Usage; totalCostUsd?: number } | undefined,
  ) {
    this.sessionUsage = carried?.usage ?? EMPTY_USAGE;
    this.sessionCostUsd = carried?.totalCostUsd ?? 0;
    this.usageBefore = this.sessionUsage;
    this.costBefore = this.sessionCostUsd;
    this.queryAccounting = new QueryAccounting(config);
  }

  get usage(): Usage {
    return this.sessionUsage;
  }

  get totalCostUsd(): number {
    return this.sessionCostUsd;
  }

  /** The running query's API time (ms). */
  get apiDurationMs(): number {
    return this.apiMs;
  }

  /** The running query's structured output and limits. */
  get accounting(): QueryAccounting {
    return this.queryAccounting;
  }

  /** A query starts (or a suspended one resumes with what it had counted). */
  startQuery(resumed: QueryInProgress | undefined): void {
    this.apiMs = resumed?.apiDurationMs ?? 0;
    this.usageBefore = resumed?.usageBefore ?? this.sessionUsage;
    this.costBefore = resumed?.costBefore ?? this.sessionCostUsd;
    this.queryAccounting = new QueryAccounting(this.config, resumed?.accounting);
  }

  /** A model call or a compaction of `model`. */
  recordModelCall(usage: Usage, model: string, durationMs: number): void {
    const cost = costOfUsage(model, usage);
    this.sessionUsage = addUsage(this.sessionUsage, usage);
    this.sessionCostUsd += cost;
    this.apiMs += durationMs;
    this.queryAccounting.recordModelCall(model, usage, cost);
  }

  /** A subagent's totals count in this conversation's. */
  recordChild(usage: Usage, costUsd: number, modelUsage: Record<string, ModelUsage> | undefined, currentModel: string): void {
    this.sessionUsage = addUsage(this.sessionUsage, usage);
    this.sessionCostUsd += costUsd;
    this.queryAccounting.recordChild(usage, costUsd, modelUsage, currentModel);
  }

  /** seed §2.10: the budget and structured-output limits, checked by the loop between messages. */
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined {
    return this.queryAccounting.checkLimits(after, this.sessionCostUsd);
  }

  /** The running query's part, carried when it is suspended for continue-as-new. */
  queryCarried(): Pick<QueryInProgress, 'usageBefore' | 'costBefore' | 'apiDurationMs' | 'accounting'> {
    return { usageBefore: this.usageBefore, costBefore: this.costBefore, apiDurationMs: this.apiMs, accounting: this.queryAccounting.toCarried() };
  }

  /** The running query's usage and cost (since it started). */
  queryTotals(): { usage: Usage; totalCostUsd: number } {
    return { usage: subtractUsage(this.sessionUsage, this.usageBefore), totalCostUsd: this.sessionCostUsd - this.costBefore };
  }

  /** What continue-as-new carries of the session's totals. */
  carried(): { usage: Usage; totalCostUsd: number } {
    return { usage: this.sessionUsage, totalCostUsd: this.sessionCostUsd };
  }
}
