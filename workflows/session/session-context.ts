/**
 * The session context (seed §2.5 getSystemContext / getUserContext: CLAUDE.md, git status,
 * settings, custom commands and agents), memoized per session in the session's own state and
 * read again after `/compact` or `/clear`. A subagent's comes from its parent and is never loaded.
 */
import { log, uuid4 } from '@temporalio/workflow';
import type { SessionContext } from '../../common/activity-types';
import type { ConversationEvent } from '../definitions';
import { failureMessage } from '../deps/failures';
import type { SessionState } from './state';

export class SessionContextSlot {
  constructor(
    private readonly state: SessionState,
    private readonly isSubagent: boolean,
    private readonly pushEvent: (message: ConversationEvent['message']) => void,
  ) {}

  get current(): SessionContext | undefined {
    return this.state.sessionContext;
  }

  /** To be read again before the next input (after a compaction or `/clear`). */
  get stale(): boolean {
    return this.state.sessionContextStale === true;
  }

  /** Whether loading it should be tried in this run. */
  get needsLoading(): boolean {
    return !this.state.sessionContext && !this.state.sessionContextAttempted && !this.isSubagent;
  }

  /** It was loaded (or failed to: `undefined` keeps the one there was). */
  loaded(context: SessionContext | undefined): void {
    if (context) this.state.sessionContext = context;
    delete this.state.sessionContextStale;
    // A malformed agent or command file is skipped; people hear about it in the feed.
    for (const warning of this.state.sessionContext?.warnings ?? []) this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: warning });
  }

  /** A load that failed: the conversation goes on without it, and people are told. */
  failed(error: unknown): void {
    log.warn('Could not load session context; continuing without it', { error: String(error) });
    const content = `Session context not loaded (no CLAUDE.md, git status or Stop hooks this session): ${failureMessage(error)}`;
    this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content });
  }

  /** After a compaction or `/clear`: read again before the next input (a subagent's comes from its parent). */
  restarted(): void {
    if (this.isSubagent) delete this.state.sessionContextStale;
    else this.state.sessionContextStale = true;
  }
}
