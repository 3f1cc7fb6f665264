/** PLACEHOLDER (helper "chat"'s branch only): helper "render" writes the real module; on merge, take theirs. */
import type { ConversationConfigInput } from '../../common/config';
import type { ConversationClient } from '../api';

export interface LocalCommandContext {
  api: ConversationClient;
  conversationId: string;
  cwd: string;
  taskQueue: string;
  config: ConversationConfigInput;
}

export type LocalCommandResult =
  | { kind: 'text'; text: string }
  | { kind: 'exit' }
  | { kind: 'send'; prompt: string }
  | { kind: 'switch'; conversationId: string }
  | { kind: 'pick'; title: string; items: { label: string; value: string; hint?: string }[]; choose: (value: string) => Promise<LocalCommandResult> };

export const LOCAL_COMMANDS: { name: string; description: string }[] = [{ name: 'exit', description: 'Leave the chat (the conversation stays)' }];

export async function runLocalCommand(line: string, ctx: LocalCommandContext): Promise<LocalCommandResult | undefined> {
  void ctx;
  return /^\/(exit|quit)\s*$/.test(line.trim()) ? { kind: 'exit' } : undefined;
}
