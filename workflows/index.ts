/** Workflow entry point for the worker bundle. */
export { conversationWorkflow } from './conversation';
export { cronFireWorkflow } from './cron-fire';
