/**
 * Pure tool specifications, shared by the workflow (scheduling decisions) and the
 * activities (execution). Nothing here may touch Node APIs: the workflow bundle imports it.
 */
import type { z } from 'zod';

/** A tool as the loop sees it: name, schema and the decisions the seed (§2.4) leaves to the tool. */
export interface ToolSpec<Schema extends z.ZodType = z.ZodType> {
  /** Claude Code's tool name; models are trained on these. */
  readonly name: string;
  /** Description sent to the model. */
  readonly description: string;
  /** Zod schema of the input; validated in the workflow and again in the activity. */
  readonly inputSchema: Schema;
  /** True when the call never changes the workspace (decides journaling). */
  isReadOnly(input: z.infer<Schema>): boolean;
  /** True when the call may run beside other concurrency-safe calls (seed §2.4). */
  isConcurrencySafe(input: z.infer<Schema>): boolean;
  /** Results longer than this are persisted to disk and replaced by a preview (seed §2.7, layer 1). */
  readonly maxResultSizeChars: number;
  /** A short human label for status and the Temporal UI, e.g. "Read src/app.ts", "Bash: npm test". */
  summarize(input: z.infer<Schema>): string;
  /**
   * A tool that needs no permission in Claude Code (rules still apply; common/permissions.ts):
   * `'none'` once the mode allows it (plan mode refuses one that is not read-only), `'none-in-any-mode'`
   * before the mode is looked at. Unset: the permission engine decides, and a tool it has no
   * decision for asks (fail closed).
   */
  readonly permission?: 'none' | 'none-in-any-mode';
}

/** Helper that keeps the schema's inferred type attached to the spec. */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): ToolSpec<Schema> {
  return spec;
}
