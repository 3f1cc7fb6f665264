/** The session layer (seed §2.10 QueryEngine): see conversation-session.ts. */
export { ConversationSession } from './conversation-session';
export type { SessionState } from './state';
