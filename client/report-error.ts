/**
 * A command's failure as a message and an exit code (2: the input was wrong; 1: anything else).
 * client/cli.ts imports this only when a command failed: it knows Temporal's and zod's errors.
 */
import { ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ZodError } from 'zod';
import { ConversationEndedError, ConversationExistsError, ConversationNotFoundError, InvalidConversationIdError } from './api';
import { TemporalUnreachableError } from '../infra/connection';
import { missingKeyMessage } from '../infra/encryption-codec';
import type { Io } from './command-line';

/** Prints `error` for a person; returns the exit code. */
export function reportError(error: unknown, io: Io): number {
  if (error instanceof ZodError) {
    io.err(`Error: invalid option: ${error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    return 2;
  }
  if (error instanceof InvalidConversationIdError) {
    io.err(`Error: --id: ${error.message}.`);
    return 2;
  }
  if (
    error instanceof TemporalUnreachableError ||
    error instanceof ConversationNotFoundError ||
    error instanceof ConversationEndedError ||
    error instanceof ConversationExistsError
  ) {
    io.err(`Error: ${error.message}`);
    return 1;
  }
  if (error instanceof ServiceError && error.cause) {
    // "Failed to start Workflow" alone does not say why: the server's answer does.
    const cause = error.cause as Error & { details?: string };
    io.err(`Error: ${error.message}: ${cause.details || cause.message}`);
    return 1;
  }
  if (error instanceof WorkflowUpdateFailedError && error.cause) {
    // The workflow refused the update (its validator, or no handler on an older worker): say why.
    io.err(`Error: ${error.message}: ${error.cause.message}`);
    return 1;
  }
  io.err(`Error: ${missingKeyMessage(error) ?? (error instanceof Error ? error.message : String(error))}`);
  return 1;
}
