/** The session layer (seed §2.10 QueryEngine): see conversation-session.ts. */
export { ConversationSession, type SessionState } from './conversation-session';
