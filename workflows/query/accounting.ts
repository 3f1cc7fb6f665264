/**
 * What one query accumulates beside the transcript for its result message (seed §2.10, the
 * Agent SDK's result): usage per model, the structured output and its failed attempts, and the
 * session limits checked between messages (budget, structured-output retries). Pure: the
 * session owns one per query and carries its state across continue-as-new.
 */
import type { ConversationConfig } from '../../common/config';
import { checkBudget } from '../../common/budget';
import type { Usage } from '../../common/messages';
import { addModelUsage, mergeModelUsage } from '../../common/model-usage';
import type { ModelUsage, Terminal } from '../../common/result';
import {
  INITIAL_STRUCTURED_OUTPUT_STATE,
  STRUCTURED_OUTPUT_ACCEPTED,
  type StructuredOutputCheck,
  type StructuredOutputState,
  structuredOutputRetriesExhausted,
} from '../../common/structured-output';

/** The part of a query's accounting that survives continue-as-new (in QueryInProgress). */
export interface QueryAccountingState {
  modelUsage: Record<string, ModelUsage>;
  structuredOutput: StructuredOutputState;
}

type Limits = Pick<ConversationConfig, 'maxBudgetUsd' | 'jsonSchema' | 'contextWindowTokens' | 'modelMaxOutputTokens'>;

export class QueryAccounting {
  private state: QueryAccountingState;

  constructor(
    private readonly config: Limits,
    carried?: QueryAccountingState,
  ) {
    this.state = carried ?? { modelUsage: {}, structuredOutput: INITIAL_STRUCTURED_OUTPUT_STATE };
  }

  /** A model call (or compaction) of `model` with this usage and cost. */
  recordModelCall(model: string, usage: Usage, costUsd: number): void {
    this.state = { ...this.state, modelUsage: addModelUsage(this.state.modelUsage, model, usage, costUsd, this.config) };
  }

  /** A subagent's totals: its own per-model usage when it reports one, else its usage under `fallbackModel`. */
  recordChild(usage: Usage, costUsd: number, childModelUsage: Record<string, ModelUsage> | undefined, fallbackModel: string): void {
    this.state = {
      ...this.state,
      modelUsage: childModelUsage
        ? mergeModelUsage(this.state.modelUsage, childModelUsage)
        : addModelUsage(this.state.modelUsage, fallbackModel, usage, costUsd, this.config),
    };
  }

  /** A StructuredOutput call's verdict: accepted (its input is the query's output) or an error result the model can act on. */
  recordStructuredOutput(check: StructuredOutputCheck): { content: string; isError: boolean } {
    const current = this.state.structuredOutput;
    if (!check.valid) {
      this.state = { ...this.state, structuredOutput: { ...current, invalidCalls: current.invalidCalls + 1 } };
      return { content: check.error, isError: true };
    }
    this.state = { ...this.state, structuredOutput: { ...current, provided: true, value: check.value } };
    return { content: STRUCTURED_OUTPUT_ACCEPTED, isError: false };
  }

  /** True when the query still owes a valid StructuredOutput call. */
  get structuredOutputMissing(): boolean {
    return this.config.jsonSchema !== undefined && !this.state.structuredOutput.provided;
  }

  /** seed §2.10: the budget after every message; structured-output attempts after tool results. */
  checkLimits(after: 'assistant' | 'tool_results', totalCostUsd: number): Terminal | undefined {
    const budget = checkBudget(totalCostUsd, this.config.maxBudgetUsd);
    if (budget) return { reason: 'budget_exhausted', error: budget };
    if (after === 'tool_results' && this.config.jsonSchema) {
      const exhausted = structuredOutputRetriesExhausted(this.state.structuredOutput);
      if (exhausted) return { reason: 'structured_output_retry_exhausted', error: exhausted };
    }
    return undefined;
  }

  /** The result's SDK fields this accounting owns. */
  resultFields(terminal: Terminal, errorText: string): { modelUsage: Record<string, ModelUsage>; errors: string[]; structured_output?: unknown } {
    const fields: { modelUsage: Record<string, ModelUsage>; errors: string[]; structured_output?: unknown } = {
      modelUsage: this.state.modelUsage,
      errors: terminal.reason === 'completed' ? [] : [errorText],
    };
    if (terminal.reason === 'completed' && this.state.structuredOutput.provided) fields.structured_output = this.state.structuredOutput.value;
    return fields;
  }

  toCarried(): QueryAccountingState {
    return this.state;
  }
}
