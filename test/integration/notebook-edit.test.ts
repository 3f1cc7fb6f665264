/**
 * NotebookEdit (issue 30's proof that a tool is one descriptor): the tool on real files — the
 * notebook stays valid nbformat 4, an edited code cell loses its outputs, ids where the notebook
 * has them — Read showing a notebook as its cells, the permission engine treating it as an edit
 * tool, the journal told before it writes, and a conversation on a real worker editing a notebook.
 */
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatherCallFacts } from '../../activities/permission-facts/gather';
import { type ToolExecutionContext, executeTool } from '../../activities/tools';
import { textVersion } from '../../activities/tools/files';
import type { ToolEffect } from '../../activities/tools/types';
import { type PermissionContext, decidePermission, ruleForAlways } from '../../common/permissions';
import { EDIT_TOOLS, TOOL_NAMES, getToolSpec } from '../../common/tool-specs';
import { toolPreview } from '../../client/tool-line';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, REPO_ROOT, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';

/** A notebook as Jupyter writes it (nbformat 4.5: cells have ids; one-space indent; a final newline). */
const NOTEBOOK = {
  cells: [
    { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Title\n', 'Some text'] },
    {
      cell_type: 'code',
      execution_count: 3,
      id: 'calc',
      metadata: { tags: ['keep'] },
      outputs: [
        { name: 'stdout', output_type: 'stream', text: ['4\n'] },
        { data: { 'text/plain': ['42'], 'image/png': 'iVBOR' }, execution_count: 3, metadata: {}, output_type: 'execute_result' },
      ],
      source: ['x = 2 + 2\n', 'print(x)'],
    },
  ],
  metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' } },
  nbformat: 4,
  nbformat_minor: 5,
};

const jupyterText = (notebook: unknown) => `${JSON.stringify(notebook, null, 1)}\n`;

describe('NotebookEdit on files', () => {
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(path.join(tmpdir(), 'durable-agent-notebook-'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });
  const context = (overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext => ({
    cwd: workspace,
    signal: new AbortController().signal,
    ...overrides,
  });
  const put = async (name: string, notebook: unknown = NOTEBOOK) => {
    const file = path.join(workspace, name);
    await writeFile(file, typeof notebook === 'string' ? notebook : jupyterText(notebook));
    return file;
  };
  const load = async (file: string) => JSON.parse(await readFile(file, 'utf8'));

  it('replaces a code cell: its source in the form the file had, outputs and execution count cleared, everything else kept', async () => {
    const file = await put('a.ipynb');
    const result = await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'y = 1\nprint(y)' }, context());
    expect(result).toEqual({ isError: false, content: 'Updated cell calc with y = 1\nprint(y)' });
    const text = await readFile(file, 'utf8');
    const edited = structuredClone(NOTEBOOK);
    Object.assign(edited.cells[1], { execution_count: null, outputs: [], source: ['y = 1\n', 'print(y)'] });
    expect(text).toBe(jupyterText(edited)); // byte for byte as Jupyter would write it: indent, key order, final newline
  });

  it('replaces a markdown cell, and a cell given as one string stays one string', async () => {
    const notebook = structuredClone(NOTEBOOK) as any;
    notebook.cells[0].source = '# Title';
    const file = await put('b.ipynb', notebook);
    expect((await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'intro', new_source: '# New title\n\nBody' }, context())).isError).toBe(false);
    const saved = await load(file);
    expect(saved.cells[0]).toEqual({ cell_type: 'markdown', id: 'intro', metadata: {}, source: '# New title\n\nBody' });
    expect(saved.cells[1]).toEqual(NOTEBOOK.cells[1]);
  });

  it('changes a cell type: a markdown cell has no outputs, a code cell gets empty ones', async () => {
    const file = await put('c.ipynb');
    await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'calc', new_source: 'Now prose', cell_type: 'markdown' }, context());
    expect((await load(file)).cells[1]).toEqual({ cell_type: 'markdown', id: 'calc', metadata: { tags: ['keep'] }, source: ['Now prose'] });
    await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'intro', new_source: 'print(1)\n', cell_type: 'code' }, context());
    const cell = (await load(file)).cells[0];
    expect(cell).toEqual({ cell_type: 'code', execution_count: null, id: 'intro', metadata: {}, outputs: [], source: ['print(1)\n'] });
    expect(Object.keys(cell)).toEqual(['cell_type', 'execution_count', 'id', 'metadata', 'outputs', 'source']);
  });

  it('inserts after the named cell, or at the start without one, with a fresh id', async () => {
    const file = await put('d.ipynb');
    const after = await executeTool(
      'NotebookEdit',
      { notebook_path: file, cell_id: 'intro', new_source: 'z = 3', cell_type: 'code', edit_mode: 'insert' },
      context(),
    );
    expect(after.isError).toBe(false);
    const first = await load(file);
    const inserted = first.cells[1];
    expect(inserted).toEqual({
      cell_type: 'code',
      execution_count: null,
      id: expect.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
      metadata: {},
      outputs: [],
      source: ['z = 3'],
    });
    expect(after.content).toBe(`Inserted cell ${inserted.id} with z = 3`);
    expect(first.cells.map((cell: any) => cell.id)).toEqual(['intro', inserted.id, 'calc']);
    await executeTool('NotebookEdit', { notebook_path: file, new_source: 'Read me first', cell_type: 'markdown', edit_mode: 'insert' }, context());
    const second = await load(file);
    expect(second.cells).toHaveLength(4);
    expect(second.cells[0]).toEqual({ cell_type: 'markdown', id: expect.any(String), metadata: {}, source: ['Read me first'] });
    expect(new Set(second.cells.map((cell: any) => cell.id)).size).toBe(4);
  });

  it('deletes a cell', async () => {
    const file = await put('e.ipynb');
    expect(await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'intro', new_source: '', edit_mode: 'delete' }, context())).toEqual({
      isError: false,
      content: 'Deleted cell intro',
    });
    expect((await load(file)).cells).toEqual([NOTEBOOK.cells[1]]);
  });

  it('a notebook without cell ids (nbformat 4.4): cells are named cell-N, and an inserted cell gets no id', async () => {
    const old = { ...structuredClone(NOTEBOOK), nbformat_minor: 4, cells: NOTEBOOK.cells.map(({ id: _id, ...cell }) => cell) };
    const file = await put('f.ipynb', old);
    const read = await executeTool('Read', { file_path: file }, context());
    expect(read.content).toContain('<cell id="cell-1"><cell_type>code</cell_type>');
    const inserted = await executeTool(
      'NotebookEdit',
      { notebook_path: file, cell_id: 'cell-0', new_source: 'mid', cell_type: 'markdown', edit_mode: 'insert' },
      context(),
    );
    expect(inserted.content).toBe('Inserted cell cell-1 with mid');
    const saved = await load(file);
    expect(saved.cells[1]).toEqual({ cell_type: 'markdown', metadata: {}, source: ['mid'] });
    expect(saved.cells.some((cell: any) => 'id' in cell)).toBe(false);
    await executeTool('NotebookEdit', { notebook_path: file, cell_id: 'cell-2', new_source: 'print(0)' }, context());
    expect((await load(file)).cells[2]).toMatchObject({ cell_type: 'code', outputs: [], execution_count: null, source: ['print(0)'] });
  });

  it('explains what it cannot do, and changes nothing', async () => {
    const file = await put('g.ipynb');
    const before = await readFile(file, 'utf8');
    const run = (input: Record<string, unknown>) => executeTool('NotebookEdit', { notebook_path: file, new_source: 'x', ...input }, context());
    expect(await run({})).toEqual({ isError: true, content: 'Cell ID must be specified when not inserting a new cell.' });
    expect(await run({ cell_id: 'nope' })).toEqual({ isError: true, content: `Cell with ID "nope" not found in notebook ${file}.` });
    expect(await run({ cell_id: 'cell-9' })).toMatchObject({ isError: true });
    expect(await run({ edit_mode: 'insert' })).toEqual({ isError: true, content: 'Cell type is required when using edit_mode=insert.' });
    expect((await run({ cell_id: 'calc', cell_type: 'raw' })).content).toMatch(/^InputValidationError: NotebookEdit failed because: cell_type/);
    expect(await readFile(file, 'utf8')).toBe(before);
    await writeFile(path.join(workspace, 'notes.txt'), 'text');
    expect((await executeTool('NotebookEdit', { notebook_path: 'notes.txt', cell_id: 'a', new_source: 'x' }, context())).content).toBe(
      'File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.',
    );
    expect((await executeTool('NotebookEdit', { notebook_path: 'missing.ipynb', cell_id: 'a', new_source: 'x' }, context())).content).toMatch(
      /^Notebook file does not exist/,
    );
    await put('broken.ipynb', '{"cells": [');
    expect((await executeTool('NotebookEdit', { notebook_path: 'broken.ipynb', cell_id: 'a', new_source: 'x' }, context())).content).toMatch(
      /is not valid JSON/,
    );
    await put('v3.ipynb', { nbformat: 3, nbformat_minor: 0, worksheets: [] });
    expect((await executeTool('NotebookEdit', { notebook_path: 'v3.ipynb', cell_id: 'a', new_source: 'x' }, context())).content).toMatch(
      /not an nbformat 4 notebook/,
    );
  });

  it('tells the journal what it is about to write before writing (a retry can finish or skip it)', async () => {
    const file = await put('h.ipynb');
    const before = await readFile(file);
    const effects: ToolEffect[] = [];
    await executeTool(
      'NotebookEdit',
      { notebook_path: file, cell_id: 'calc', new_source: 'pass' },
      context({ beginEffect: async (effect) => void effects.push(effect) }),
    );
    const after = await readFile(file, 'utf8');
    expect(effects).toEqual([
      {
        kind: 'file',
        path: file,
        before: textVersion(before),
        after: textVersion(after),
        afterText: after,
        result: { isError: false, content: 'Updated cell calc with pass' },
      },
    ]);
  });

  it('acts on the path it was judged on: a link swapped to lead out of the working directories is refused', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'durable-agent-notebook-outside-'));
    try {
      const target = path.join(outside, 'o.ipynb');
      await writeFile(target, jupyterText(NOTEBOOK));
      await symlink(target, path.join(workspace, 'linked.ipynb'));
      const access = { workingDirectories: [workspace], readDeny: [] };
      const result = await executeTool('NotebookEdit', { notebook_path: 'linked.ipynb', cell_id: 'calc', new_source: 'hacked' }, context({ access }));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/a symbolic link on the way leads to/);
      expect(await readFile(target, 'utf8')).toBe(jupyterText(NOTEBOOK));
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('Read shows a notebook as its cells: id, type, source and text outputs; with an offset, its lines', async () => {
    const file = await put('r.ipynb');
    const read = await executeTool('Read', { file_path: file }, context());
    expect(read).toEqual({
      isError: false,
      content: [
        '<cell id="intro"><cell_type>markdown</cell_type># Title\nSome text</cell id="intro">',
        '<cell id="calc"><cell_type>code</cell_type>x = 2 + 2\nprint(x)\n<outputs>\n4\n42\n</outputs></cell id="calc">',
      ].join('\n'),
    });
    expect((await executeTool('Read', { file_path: file, offset: 1, limit: 2 }, context())).content).toMatch(
      /^ {5}1\t\{\n {5}2\t "cells": \[\n\n<system-reminder>Showing lines 1-2\./,
    );
    await put('not-json.ipynb', 'plain text\n');
    expect((await executeTool('Read', { file_path: 'not-json.ipynb' }, context())).content).toBe('     1\tplain text');
  });
});

describe('NotebookEdit as a descriptor', () => {
  const CWD = '/work/repo';
  const ctx = (overrides: Partial<PermissionContext> & { deny?: string[]; allow?: string[] } = {}): PermissionContext => ({
    mode: overrides.mode ?? 'default',
    rules: {
      allow: (overrides.allow ?? []).map((rule) => ({ rule, source: 'cliArg' as const })),
      deny: (overrides.deny ?? []).map((rule) => ({ rule, source: 'cliArg' as const })),
      ask: [],
    },
    workingDirectories: [CWD],
    homeDir: '/home/alice',
  });
  const decide = async (input: Record<string, unknown>, context: PermissionContext) => {
    const gathered = await gatherCallFacts({ toolUseId: 't', name: 'NotebookEdit', input }, CWD, '/home/alice');
    return decidePermission({ toolName: 'NotebookEdit', input }, { validInput: true, readOnly: false, gathered }, context).behavior;
  };

  it('is offered, is an edit tool, and Edit rules cover it', async () => {
    expect(TOOL_NAMES).toContain('NotebookEdit');
    expect(EDIT_TOOLS.has('NotebookEdit')).toBe(true);
    const input = { notebook_path: `${CWD}/a.ipynb`, cell_id: 'x', new_source: 'y' };
    expect(await decide(input, ctx())).toBe('ask');
    expect(await decide(input, ctx({ mode: 'acceptEdits' }))).toBe('allow');
    expect(await decide(input, ctx({ mode: 'plan' }))).toBe('deny');
    expect(await decide(input, ctx({ mode: 'acceptEdits', deny: ['Edit(a.ipynb)'] }))).toBe('deny');
    expect(await decide(input, ctx({ allow: ['Edit(*.ipynb)'] }))).toBe('allow');
    expect(await decide({ ...input, notebook_path: '/etc/x.ipynb' }, ctx({ mode: 'acceptEdits' }))).toBe('ask');
    expect(ruleForAlways('NotebookEdit', input, CWD)).toBe('NotebookEdit(//work/repo/**)');
  });

  it('summarizes and previews from its spec', () => {
    const spec = getToolSpec('NotebookEdit')!;
    expect(spec.summarize(spec.inputSchema.parse({ notebook_path: '/w/a.ipynb', new_source: '' }))).toBe('NotebookEdit /w/a.ipynb');
    expect(toolPreview('NotebookEdit', { notebook_path: 'a.ipynb', cell_id: 'c', new_source: 'one\ntwo' })).toEqual(['    + one', '    + two']);
  });
});

describe('NotebookEdit in a conversation', () => {
  let harness: Harness;
  afterEach(async () => {
    await harness?.close();
  });

  const toolResults = (request: RecordedRequest): Array<{ content: string; is_error?: boolean }> =>
    (request.body.messages.at(-1).content as any[]).filter((block) => block.type === 'tool_result');

  it('reads a notebook as cells, edits and inserts cells on a real worker, and an Edit deny rule stops it', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'analysis.ipynb' } }] },
        {
          content: [{ type: 'tool_use', name: 'NotebookEdit', input: { notebook_path: 'analysis.ipynb', cell_id: 'calc', new_source: 'x = 6 * 7\nprint(x)' } }],
        },
        {
          content: [
            {
              type: 'tool_use',
              name: 'NotebookEdit',
              input: { notebook_path: 'analysis.ipynb', cell_id: 'calc', new_source: 'The answer is above.', cell_type: 'markdown', edit_mode: 'insert' },
            },
          ],
        },
        { content: [{ type: 'tool_use', name: 'NotebookEdit', input: { notebook_path: 'locked.ipynb', cell_id: 'calc', new_source: 'no' } }] },
        { content: [{ type: 'text', text: 'The notebook computes 42 now.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'analysis.ipynb'), jupyterText(NOTEBOOK));
    await writeFile(path.join(harness.workspace, 'locked.ipynb'), jupyterText(NOTEBOOK));
    await harness.startWorker();

    const { result } = await runToResult(harness, 'Make the notebook compute 42.', {
      permissions: { mode: 'acceptEdits', deny: ['Edit(locked.ipynb)'] } as never,
    });
    expect(result).toMatchObject({ subtype: 'success', result: 'The notebook computes 42 now.', num_turns: 5 });

    const saved = JSON.parse(await readFile(path.join(harness.workspace, 'analysis.ipynb'), 'utf8'));
    expect(saved.nbformat).toBe(4);
    expect(saved.cells.map((cell: any) => cell.cell_type)).toEqual(['markdown', 'code', 'markdown']);
    expect(saved.cells[1]).toEqual({ ...NOTEBOOK.cells[1], execution_count: null, outputs: [], source: ['x = 6 * 7\n', 'print(x)'] });
    expect(saved.cells[2]).toMatchObject({ id: expect.any(String), metadata: {}, source: ['The answer is above.'] });
    expect(await readFile(path.join(harness.workspace, 'locked.ipynb'), 'utf8')).toBe(jupyterText(NOTEBOOK));

    const requests = harness.model.requests;
    expect(requests[0].body.tools.map((tool: any) => tool.name)).toContain('NotebookEdit');
    const definition = requests[0].body.tools.find((tool: any) => tool.name === 'NotebookEdit');
    expect(Object.keys(definition.input_schema.properties).sort()).toEqual(['cell_id', 'cell_type', 'edit_mode', 'new_source', 'notebook_path']);
    expect(definition.input_schema.required.sort()).toEqual(['new_source', 'notebook_path']);
    expect(toolResults(requests[1])[0].content).toContain('<cell id="calc"><cell_type>code</cell_type>x = 2 + 2');
    expect(toolResults(requests[2])[0]).toMatchObject({ content: 'Updated cell calc with x = 6 * 7\nprint(x)' });
    expect(toolResults(requests[3])[0].content).toMatch(/^Inserted cell \S+ with The answer is above\.$/);
    expect(toolResults(requests[4])[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/denied/i) });
    for (const request of requests) expectValidApiOrder(request);
  });

  it('a worker SIGKILLed after the journal marked the edit started, before the write, makes the edit once on the next worker', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'NotebookEdit', input: { notebook_path: 'analysis.ipynb', cell_id: 'calc', new_source: 'print(42)' } }] },
        { content: [{ type: 'text', text: 'Edited.' }] },
      ],
    });
    const file = path.join(harness.workspace, 'analysis.ipynb');
    await writeFile(file, jupyterText(NOTEBOOK));
    const marker = path.join(harness.stateDir, 'worker-held');
    const first = await harness.spawnWorkerProcess({
      imports: [pathToFileURL(path.join(REPO_ROOT, 'test', 'helpers', 'hold-tool.cjs')).href],
      env: { DURABLE_AGENT_TEST_HOLD: 'after-start:NotebookEdit', DURABLE_AGENT_TEST_HOLD_MARKER: marker },
    });
    const started = await harness.api.start({ prompt: 'print 42', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      () => readFile(marker, 'utf8').catch(() => ''),
      (text) => text !== '',
    );
    expect(await readFile(file, 'utf8')).toBe(jupyterText(NOTEBOOK)); // parked before the write
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await harness.spawnWorkerProcess();
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);

    expect(result).toMatchObject({ subtype: 'success', result: 'Edited.' });
    expect(harness.model.requests).toHaveLength(2);
    expect(toolResults(harness.model.requests[1])[0]).toMatchObject({ content: 'Updated cell calc with print(42)' });
    const edited = structuredClone(NOTEBOOK);
    Object.assign(edited.cells[1], { execution_count: null, outputs: [], source: ['print(42)'] });
    expect(await readFile(file, 'utf8')).toBe(jupyterText(edited));
  });
});
