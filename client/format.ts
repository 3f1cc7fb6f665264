/**
 * Human-readable rendering of conversation events and status for the terminal.
 */
import type { ResultMessage } from '../common/result';
import type { ConversationEvent, ConversationStatus } from '../workflows/definitions';

function firstLine(text: string, max = 160): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function describeInput(name: string, input: unknown): string {
  const record = (input ?? {}) as Record<string, unknown>;
  const detail = record.command ?? record.file_path ?? record.pattern ?? '';
  return `${name}(${firstLine(String(detail), 100)})`;
}

/** One event as terminal lines, or undefined for events people need not see. */
export function formatEvent(event: ConversationEvent): string | undefined {
  const message = event.message;
  switch (message.type) {
    case 'user_input':
      return `> ${message.prompt}`;
    case 'assistant': {
      const lines: string[] = [];
      for (const block of message.message.content) {
        if (block.type === 'text' && block.text.trim()) lines.push(block.text.trim());
        if (block.type === 'tool_use') lines.push(`● ${describeInput(block.name, block.input)}`);
      }
      return lines.length > 0 ? lines.join('\n') : undefined;
    }
    case 'user': {
      if (typeof message.message.content === 'string') return message.isMeta ? `  (${firstLine(message.message.content)})` : undefined;
      const lines = message.message.content
        .filter((block) => block.type === 'tool_result')
        .map((block) => {
          const text = typeof block.content === 'string' ? block.content : block.content.map((part) => part.text).join('');
          const count = text.split('\n').length;
          return `  ⎿ ${block.is_error ? 'Error: ' : ''}${firstLine(text, 120)}${count > 1 ? ` (+${count - 1} lines)` : ''}`;
        });
      return lines.length > 0 ? lines.join('\n') : undefined;
    }
    case 'system':
      return `[${message.level}] ${message.content}`;
    case 'result':
      return formatResultLine(message);
    default:
      return undefined;
  }
}

export function formatResultLine(result: ResultMessage): string {
  const cost = `$${result.total_cost_usd.toFixed(4)}`;
  const head = result.is_error ? `✗ ${result.terminal_reason}` : '✓ done';
  return `${head} · ${result.num_turns} turn${result.num_turns === 1 ? '' : 's'} · ${(result.duration_ms / 1000).toFixed(1)}s · ${cost}` +
    (result.transitions.length > 0 ? ` · transitions: ${result.transitions.join(' → ')}` : '');
}

export function formatStatus(status: ConversationStatus): string {
  const lines = [
    `conversation  ${status.conversationId}`,
    `phase         ${status.phase}`,
    `model         ${status.currentModel}${status.currentModel !== status.model ? ` (fallback from ${status.model})` : ''}`,
    `queries       ${status.queryCount}   turn ${status.turnCount}   messages ${status.messageCount}`,
    `usage         in ${status.usage.input_tokens}  out ${status.usage.output_tokens}  cost $${status.totalCostUsd.toFixed(4)}  context ${status.contextTokens} tokens`,
  ];
  if (status.transitions.length > 0) lines.push(`transitions   ${status.transitions.join(' → ')}`);
  if (status.toolsInFlight.length > 0) lines.push(`tools         ${status.toolsInFlight.map((tool) => tool.summary).join(', ')}`);
  if (status.queuedInputs > 0) lines.push(`queued        ${status.queuedInputs} input(s)`);
  if (status.lastResult) lines.push(`last result   ${formatResultLine(status.lastResult)}`, `              ${firstLine(status.lastResult.result)}`);
  return lines.join('\n');
}
