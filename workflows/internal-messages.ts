/**
 * Messages between our own components (the model activity, subagents, workers' caches) go
 * through the default signal and query handlers instead of named ones. Named handlers are what
 * the `__temporal_workflow_metadata` query lists, and so what the Temporal UI offers a person in
 * its "Send a Signal" and query menus: there only `userInput`, `abort`, `end`, `compact` and the
 * read-only queries should appear. The wire names stay the same, so senders and recorded
 * histories are unaffected (signals and queries are not commands).
 */
import { ApplicationFailure, log, setDefaultQueryHandler, setDefaultSignalHandler } from '@temporalio/workflow';
import type { RequestContext } from '../common/activity-types';
import type { CronFire } from '../common/cron';
import {
  type BackgroundAgentReport,
  type SubagentProgress,
  backgroundAgentFinishedSignal,
  cronFiredSignal,
  type ToolUseStreamed,
  requestContextQuery,
  subagentProgressSignal,
  toolUseStreamedSignal,
  transcriptSliceQuery,
} from './definitions';
import { type LiveRead, liveReadQuery } from './ui/live-stream';
import type { TranscriptSlice } from '../common/worker-messages';

/** Where internal messages land (the session, and the transcript for slices). */
export interface InternalMessageHandlers {
  toolUseStreamed(raw: ToolUseStreamed): void;
  subagentProgress(progress: SubagentProgress): void;
  /** A background agent answered (workflows/background/agents.ts). */
  backgroundAgentFinished?(report: BackgroundAgentReport): void;
  /** A cron job's Schedule fired (workflows/cron-fire.ts delivers it; workflows/background/cron-jobs.ts). */
  cronFired?(fire: CronFire): void;
  requestContext(digest: string): RequestContext | null;
  transcriptSlice(request: { from: number; maxBytes?: number }): TranscriptSlice;
  /** The live channel's items from an offset (client/live.ts reads a busy conversation with it). */
  liveRead?(from: number): LiveRead | null;
}

/** Registers the default handlers that route internal signals and queries by name. */
export function handleInternalMessages(handlers: InternalMessageHandlers): void {
  setDefaultSignalHandler((name, ...args) => {
    switch (name) {
      case toolUseStreamedSignal.name:
        return handlers.toolUseStreamed(args[0] as ToolUseStreamed);
      case subagentProgressSignal.name:
        return handlers.subagentProgress(args[0] as SubagentProgress);
      case backgroundAgentFinishedSignal.name:
        return handlers.backgroundAgentFinished?.(args[0] as BackgroundAgentReport);
      case cronFiredSignal.name:
        return handlers.cronFired?.(args[0] as CronFire);
      default:
        // Signals cannot reply: log and drop (style §6).
        log.warn('Dropped a signal this workflow does not handle', { signal: name });
    }
  });
  setDefaultQueryHandler((name, ...args) => {
    switch (name) {
      case requestContextQuery.name:
        return handlers.requestContext(args[0] as string);
      case transcriptSliceQuery.name: {
        const request = args[0] as { from: number; maxBytes?: number } | undefined;
        if (typeof request?.from !== 'number') throw ApplicationFailure.nonRetryable('transcriptSlice takes {"from": number, "maxBytes"?: number}');
        return handlers.transcriptSlice(request);
      }
      case liveReadQuery.name: {
        const request = args[0] as { from: number } | undefined;
        if (typeof request?.from !== 'number' || !handlers.liveRead) throw ApplicationFailure.nonRetryable('liveRead takes {"from": number}');
        return handlers.liveRead(request.from);
      }
      default:
        throw ApplicationFailure.nonRetryable(`Unknown query "${name}". Queries: status, events, history.`);
    }
  });
}
