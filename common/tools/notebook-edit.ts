/**
 * NotebookEdit, Claude Code's tool for Jupyter notebooks (pure; the workflow bundle imports it).
 * The whole tool is this spec: the edit is a pure function of the notebook's text, which the
 * activity side reads, journals and writes like any file edit (ToolSpec.editFile,
 * activities/tools/file-edit.ts), and Read shows a `.ipynb` as its cells (ToolSpec.fileFormat).
 * The notebook stays valid nbformat 4: ids where the notebook has them (4.5+), each cell's
 * `source` in the form the file had it, a code cell's outputs cleared when its source changes.
 */
import { z } from 'zod';
import type { FileEdit } from '../tool-spec';
import { defineTool } from '../tool-spec';

export const NOTEBOOK_EXTENSION = '.ipynb';

export const notebookEditInputSchema = z.strictObject({
  notebook_path: z.string().describe('The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)'),
  cell_id: z
    .string()
    .optional()
    .describe(
      'The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.',
    ),
  new_source: z.string().describe('The new source for the cell'),
  cell_type: z
    .enum(['code', 'markdown'])
    .optional()
    .describe('The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.'),
  edit_mode: z.enum(['replace', 'insert', 'delete']).optional().describe('The type of edit to make (replace, insert, delete). Defaults to replace.'),
});

export type NotebookEditInput = z.infer<typeof notebookEditInputSchema>;

/** What an nbformat 4 notebook must have for an edit (checked on the parsed JSON; every other key is kept as it was). */
const notebookShape = z.looseObject({
  nbformat: z.literal(4),
  nbformat_minor: z.number().int().min(0),
  cells: z.array(
    z.looseObject({
      cell_type: z.string(),
      source: z.union([z.string(), z.array(z.string())]),
      id: z.string().optional(),
      outputs: z.array(z.unknown()).optional(),
    }),
  ),
});

type Cell = Record<string, unknown> & { cell_type: string; source: string | string[]; id?: string; outputs?: unknown[] };
type Notebook = Record<string, unknown> & { nbformat: 4; nbformat_minor: number; cells: Cell[] };

/** The notebook in `text`, or why it is not one. The returned object is the parsed JSON itself (key order kept). */
function parseNotebook(text: string): Notebook | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return `the notebook is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  const checked = notebookShape.safeParse(json);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return `it is not an nbformat 4 notebook (${issue.path.map(String).join('.') || 'top level'}: ${issue.message})`;
  }
  return json as Notebook;
}

/** nbformat 4.5 gave every cell an `id`. */
function usesCellIds(notebook: Notebook): boolean {
  return notebook.nbformat_minor >= 5;
}

/** A cell's id as Read shows it: its own, or `cell-N` (0-based) in a notebook without ids. */
function shownId(cell: Cell, index: number): string {
  return typeof cell.id === 'string' ? cell.id : `cell-${index}`;
}

/** The index of the cell `cellId` names (its id, or `cell-N`), or -1. */
function findCell(notebook: Notebook, cellId: string): number {
  const byId = notebook.cells.findIndex((cell) => cell.id === cellId);
  if (byId !== -1) return byId;
  const numbered = /^cell-(\d+)$/.exec(cellId);
  const index = numbered ? Number(numbered[1]) : -1;
  return index < notebook.cells.length ? index : -1;
}

/** `text` as a cell's source in the form `like` has: one string, or its lines each ending in `\n` (nbformat's multiline string). */
function sourceLike(like: string | string[], text: string): string | string[] {
  return Array.isArray(like) ? (text.match(/[^\n]*\n|[^\n]+$/g) ?? []) : text;
}

function cellText(source: string | string[]): string {
  return Array.isArray(source) ? source.join('') : source;
}

/** The notebook as text again, indented as `original` was (Jupyter writes one space) and ending as it did. */
function serialize(notebook: Notebook, original: string): string {
  const indent = /^\{\r?\n([ \t]+)"/.exec(original)?.[1] ?? (original.trimStart().startsWith('{"') ? undefined : ' ');
  return JSON.stringify(notebook, null, indent) + (original.endsWith('\n') ? '\n' : '');
}

/** A cell with its keys in the order Jupyter writes them (sorted). */
function sortedCell(cell: Record<string, unknown>): Cell {
  return Object.fromEntries(Object.entries(cell).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Cell;
}

function editNotebook(input: NotebookEditInput, text: string | undefined, filePath: string, newId: () => string): FileEdit {
  if (!filePath.toLowerCase().endsWith(NOTEBOOK_EXTENSION)) {
    return { error: 'File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.' };
  }
  if (text === undefined) return { error: `Notebook file does not exist: ${filePath}.` };
  const notebook = parseNotebook(text);
  if (typeof notebook === 'string') return { error: `Cannot edit ${filePath}: ${notebook}.` };
  const mode = input.edit_mode ?? 'replace';
  const { cells } = notebook;
  if (mode !== 'insert' && input.cell_id === undefined) return { error: 'Cell ID must be specified when not inserting a new cell.' };
  const index = input.cell_id === undefined ? -1 : findCell(notebook, input.cell_id);
  if (input.cell_id !== undefined && index === -1) return { error: `Cell with ID "${input.cell_id}" not found in notebook ${filePath}.` };

  if (mode === 'insert') {
    if (input.cell_type === undefined) return { error: 'Cell type is required when using edit_mode=insert.' };
    const like = cells[index === -1 ? 0 : index]?.source ?? [];
    const id = usesCellIds(notebook) ? newId() : undefined;
    const cell: Record<string, unknown> = { cell_type: input.cell_type, metadata: {}, source: sourceLike(like, input.new_source) };
    if (id !== undefined) cell.id = id;
    if (input.cell_type === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
    cells.splice(index + 1, 0, sortedCell(cell));
    return { text: serialize(notebook, text), result: `Inserted cell ${id ?? `cell-${index + 1}`} with ${input.new_source}` };
  }
  const cell = cells[index];
  const id = shownId(cell, index);
  if (mode === 'delete') {
    cells.splice(index, 1);
    return { text: serialize(notebook, text), result: `Deleted cell ${id}` };
  }
  const type = input.cell_type ?? cell.cell_type;
  let edited: Cell = { ...cell, source: sourceLike(cell.source, input.new_source) };
  if (type !== cell.cell_type) {
    edited.cell_type = type;
    if (type === 'code') edited = sortedCell({ ...edited, execution_count: null, outputs: [] });
    else {
      delete edited.execution_count;
      delete edited.outputs;
    }
  } else if (type === 'code') {
    // The outputs were those of the old source: cleared, as running nothing gives.
    edited.execution_count = null;
    edited.outputs = [];
  }
  cells[index] = edited;
  return { text: serialize(notebook, text), result: `Updated cell ${id} with ${input.new_source}` };
}

/** One output as text: a stream's text, a result's `text/plain`, an error's name and value; other data by its type. */
function outputText(output: unknown): string {
  if (typeof output !== 'object' || output === null) return '';
  const record = output as Record<string, unknown>;
  const join = (value: unknown) => (Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '');
  if (record.output_type === 'stream') return join(record.text);
  if (record.output_type === 'error') return `${String(record.ename)}: ${String(record.evalue)}`;
  const data = record.data;
  if (typeof data !== 'object' || data === null) return '';
  const plain = (data as Record<string, unknown>)['text/plain'];
  if (plain !== undefined) return join(plain);
  return Object.keys(data)
    .map((type) => `[${type} output not shown]`)
    .join('\n');
}

/** A notebook as Read shows it: each cell with its id, type and source, then its text outputs; undefined when it is not a notebook. */
function showNotebook(text: string): string | undefined {
  const notebook = parseNotebook(text);
  if (typeof notebook === 'string') return undefined;
  if (notebook.cells.length === 0) return '<system-reminder>The notebook has no cells.</system-reminder>';
  return notebook.cells
    .map((cell, index) => {
      const id = shownId(cell, index);
      const outputs = (cell.outputs ?? []).map(outputText).filter((shown) => shown !== '');
      const shownOutputs = outputs.length === 0 ? '' : `\n<outputs>\n${outputs.map((shown) => shown.replace(/\n$/, '')).join('\n')}\n</outputs>`;
      return `<cell id="${id}"><cell_type>${cell.cell_type}</cell_type>${cellText(cell.source)}${shownOutputs}</cell id="${id}">`;
    })
    .join('\n');
}

export const notebookEditToolSpec = defineTool({
  name: 'NotebookEdit',
  description: `Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used for data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a relative path. The cell_id is the ID of the cell to edit, as Read shows it. Use edit_mode=insert to add a new cell after the cell with the ID specified by cell_id (at the beginning when no cell_id is given). Use edit_mode=delete to delete the cell with the ID specified by cell_id.`,
  inputSchema: notebookEditInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 100_000,
  fileAccess: { access: 'write', pathField: 'notebook_path', target: 'file' },
  changePreview: (input) =>
    input.edit_mode === 'delete' ? { kind: 'lines', removed: `cell ${input.cell_id ?? ''}` } : { kind: 'lines', added: input.new_source },
  summarize: (input) => `NotebookEdit ${input.notebook_path}`,
  editFile: (input, text, context) => editNotebook(input, text, context.filePath, context.newId),
  fileFormat: { extension: NOTEBOOK_EXTENSION, show: showNotebook },
});
