/**
 * Pure tool specifications, shared by the workflow (scheduling decisions) and the
 * activities (execution). Nothing here may touch Node APIs: the workflow bundle imports it.
 */
import type { z } from 'zod';
import type { CallFacts } from './permission-facts';

/** A tool as the loop sees it: name, schema and the decisions the seed (§2.4) leaves to the tool. */
export interface ToolSpec<Schema extends z.ZodType = z.ZodType> {
  /** Claude Code's tool name; models are trained on these. */
  readonly name: string;
  /** Description sent to the model. */
  readonly description: string;
  /** Zod schema of the input; validated in the workflow and again in the activity. */
  readonly inputSchema: Schema;
  /**
   * True when the call never changes the workspace (decides journaling, early start, plan mode).
   * `facts`: what was gathered where the tool acts (common/permission-facts.ts); a tool whose
   * answer depends on them (Bash: the parsed command) says false without them.
   */
  isReadOnly(input: z.infer<Schema>, facts?: CallFacts): boolean;
  /** True when the call may run beside other concurrency-safe calls (seed §2.4); `facts` as for `isReadOnly`. */
  isConcurrencySafe(input: z.infer<Schema>, facts?: CallFacts): boolean;
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
  /** The file or directory the call touches (unset: none). */
  readonly fileAccess?: FileAccess;
  /**
   * The input field holding a shell command: its facts are gathered on the workspace's host
   * (common/permission-facts.ts) and a person approving it sees it whole (client/tool-line.ts).
   */
  readonly shellCommandField?: string;
  /** Micro-compaction may clear its old results (Claude Code's compactable tools; workflows/compaction/micro.ts). */
  readonly microCompactable?: boolean;
  /**
   * Short and read-only: may run as a local activity, in the workflow task that asked for it
   * (at-least-once, a minute at most; workflows/deps/tool-run.ts), and be prefetched while the
   * model streams (workflows/query/prefetched-calls.ts).
   */
  readonly localActivity?: boolean;
  /**
   * What the call would change in its file, for the diff a person judges before allowing it
   * (client/render/diff.ts) and the line that says what it did (`Updated x.ts with 1 addition`,
   * `Wrote 3 lines to x.ts`; client/tool-line.ts).
   */
  changePreview?(input: z.infer<Schema>): ChangePreview;
  /**
   * What a call that succeeded did, in Claude Code's words (`Read 11 lines`, `Found 4 files`),
   * from the result the model got; several lines at most a few. Unset (or undefined): a tool with
   * a `changePreview` is told by its diff, any other by its result's first line.
   */
  describeResult?(input: z.infer<Schema>, content: string): string | undefined;
  /**
   * A tool that changes one file (its `fileAccess` path, access `write`) by a pure edit of its text:
   * the activity side reads the file where the tool acts (the AccessGuard's checks), hands its text
   * here, then journals and writes what comes back, as Edit does (activities/tools/file-edit.ts).
   * Such a tool needs no implementation file of its own. `text`: the file's content, undefined when
   * it does not exist; `newId`: a fresh random id, for what the edit creates.
   */
  editFile?(input: z.infer<Schema>, text: string | undefined, context: { readonly filePath: string; newId(): string }): FileEdit;
  /**
   * A tool whose permission rules carry a specifier of its own (`WebFetch(domain:example.com)`):
   * whether the rule's `content` covers the call. Unset: specifiers are paths (file tools) or the
   * parsed command (Bash); for any other tool a rule with a specifier covers nothing.
   */
  ruleMatches?(input: z.infer<Schema>, content: string): boolean;
  /** The allow rule "Yes, and don't ask again" adds for such a tool (`WebFetch(domain:example.com)`); unset or undefined: the tool's name. */
  alwaysRule?(input: z.infer<Schema>): string | undefined;
  /** A file format the tool edits, and how Read shows such a file (NotebookEdit: a `.ipynb` as its cells). */
  readonly fileFormat?: FileFormat;
}

/**
 * A file change as a person sees it: `edit` replaces `oldText` by `newText` in the file (each
 * occurrence with `replaceAll`); `write` makes `content` the file's whole text; `lines`: lines
 * added or removed that are not numbered lines of the file (a notebook cell).
 */
export type ChangePreview =
  | { readonly kind: 'edit'; readonly oldText: string; readonly newText: string; readonly replaceAll: boolean }
  | { readonly kind: 'write'; readonly content: string }
  | { readonly kind: 'lines'; readonly added?: string; readonly removed?: string };

/** `1 line`, `3 lines`: a count and its noun, for result descriptions. */
export function countOf(value: number, noun: string, plural = `${noun}s`): string {
  return `${value} ${value === 1 ? noun : plural}`;
}

/** What `editFile` decided: the file's new text and the call's result, or why nothing changes (an error result). */
export type FileEdit = { readonly text: string; readonly result: string } | { readonly error: string };

/** A file format a tool declares (common/tool-specs.ts `fileFormatFor`). */
export interface FileFormat {
  /** How the file's name ends, e.g. `.ipynb` (compared without case). */
  readonly extension: string;
  /** The file's text as Read shows it, or undefined when it is not of the format after all (Read shows its lines). */
  show(text: string): string | undefined;
}

/**
 * The path a file tool touches, judged by the permission engine's path rules
 * (common/permissions.ts) and gathered as facts on the workspace's host
 * (activities/permission-facts/paths.ts).
 */
export interface FileAccess {
  /** `read`: Read rules cover the tool; `write`: Edit rules do. */
  readonly access: 'read' | 'write';
  /** The input field holding the path. */
  readonly pathField: string;
  /** `file`: the field names the file (required); `directory`: the directory searched, the working directory when absent. */
  readonly target: 'file' | 'directory';
  /** An input field holding a glob pattern, whose leading directories are touched too (`../**`, `/etc/*` leave the root). */
  readonly patternField?: string;
}

/** Helper that keeps the schema's inferred type attached to the spec. */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): ToolSpec<Schema> {
  return spec;
}
