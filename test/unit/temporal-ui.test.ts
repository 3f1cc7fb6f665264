/** What the Temporal UI and `durable-agent list` show, as pure decisions and text. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { closedConversationStatus } from '../../client/closed-status';
import { LIST_HEADER, ListFilterError, formatTable, listQuery, listRow } from '../../client/commands/list';
import { formatStatus } from '../../client/format';
import { staticDetails } from '../../client/api';
import { parseConversationConfig } from '../../common/config';
import {
  COST_SEARCH_ATTRIBUTE,
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  SEARCH_ATTRIBUTES,
  STATUS_SEARCH_ATTRIBUTE,
  TURNS_SEARCH_ATTRIBUTE,
  WORKSPACE_SEARCH_ATTRIBUTE,
  progressSearchAttributes,
  searchStatusOf,
  startSearchAttributes,
} from '../../common/search-attributes';
import { toolCallSummary, toolErrorMessage } from '../../common/tool-ui';
import { PHASES } from '../../workflows/definitions';
import { formatCurrentDetails, formatDuration, idleTimerSummary, modelCallSummary } from '../../workflows/ui/details';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CLI_TYPE_NAMES: Record<string, string> = {
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.DATETIME]: 'Datetime',
};

describe('search attributes', () => {
  it('list a phase under a coarse status a person filters on', () => {
    expect(Object.fromEntries(PHASES.map((phase) => [phase, searchStatusOf(phase)]))).toEqual({
      idle: 'awaiting_input',
      calling_model: 'running',
      running_tools: 'running',
      compacting: 'running',
      stop_hooks: 'running',
      awaiting_input: 'awaiting_input',
      awaiting_permission: 'awaiting_permission',
      ended: 'ended',
    });
  });

  it('start with the registered ones only, the first prompt cut to 500 characters', () => {
    const now = new Date('2026-11-30T03:00:00Z');
    const all = startSearchAttributes({ status: 'running', model: 'm', firstPrompt: 'x'.repeat(600), workspace: '/w', now, forkedFrom: 'parent' });
    expect(all.map((pair) => pair.key.name).sort()).toEqual(SEARCH_ATTRIBUTES.map((key) => key.name).sort());
    expect(all.find((pair) => pair.key.name === FIRST_PROMPT_SEARCH_ATTRIBUTE.name)?.value).toHaveLength(500);
    // An older server with only the first two: a conversation starts with those (unknown ones would be refused).
    const old = startSearchAttributes({ status: 'awaiting_input', model: 'm', workspace: '/w', now }, new Set(['DurableAgentStatus', 'DurableAgentModel']));
    expect(old.map((pair) => [pair.key.name, pair.value])).toEqual([
      ['DurableAgentStatus', 'awaiting_input'],
      ['DurableAgentModel', 'm'],
    ]);
    // Encrypted history: search attributes are stored in clear, so no prompt text and no path.
    const encrypted = startSearchAttributes({ status: 'running', model: 'm', firstPrompt: 'secret', workspace: '/secret', now }, undefined, {
      withContent: false,
    });
    expect(encrypted.map((pair) => pair.key.name)).toEqual([
      'DurableAgentStatus',
      'DurableAgentModel',
      'DurableAgentTurns',
      'DurableAgentCostUsd',
      'DurableAgentLastActivity',
    ]);
  });

  it('a fork names its parent (issue 31); a conversation that is not a fork has no such attribute', () => {
    const now = new Date(0);
    const fork = startSearchAttributes({ status: 'running', model: 'm', workspace: '/w-fork', now, forkedFrom: 'parent-1' });
    expect(fork.find((pair) => pair.key.name === 'DurableAgentForkedFrom')?.value).toBe('parent-1');
    expect(startSearchAttributes({ status: 'running', model: 'm', workspace: '/w', now }).map((pair) => pair.key.name)).not.toContain('DurableAgentForkedFrom');
  });

  it('upsert only the attributes the run was started with, cost rounded', () => {
    const pairs = progressSearchAttributes(
      { status: 'ended', model: 'm', turns: 7, costUsd: 0.1 + 0.2, now: new Date(0) },
      (name) => name !== WORKSPACE_SEARCH_ATTRIBUTE.name && name !== COST_SEARCH_ATTRIBUTE.name,
    );
    expect(pairs.map((pair) => [pair.key.name, pair.value])).toEqual([
      ['DurableAgentStatus', 'ended'],
      ['DurableAgentModel', 'm'],
      ['DurableAgentTurns', 7],
      ['DurableAgentLastActivity', new Date(0)],
    ]);
    expect(progressSearchAttributes({ status: 'ended', model: 'm', turns: 1, costUsd: 0.1 + 0.2, now: new Date(0) }, () => true)[3].value).toBe(0.3);
  });

  it('are registered with the same names and types wherever a server is prepared', () => {
    const compose = readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const deployment = readFileSync(path.join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
    // docker-compose registers them with infra/namespace-setup.ts (from SEARCH_ATTRIBUTES), not a list of its own.
    expect(compose).toContain('infra/namespace-setup.ts');
    for (const key of SEARCH_ATTRIBUTES) {
      const type = CLI_TYPE_NAMES[key.type];
      expect(compose).not.toContain(key.name);
      expect(deployment).toContain(`--name ${key.name} --type ${type}`);
      expect(deployment).toContain(`--search-attribute ${key.name}=${type}`);
      expect(deployment).toContain(`"${key.name}=${type}"`);
    }
  });
});

describe('durable-agent list', () => {
  it('builds a visibility query from the filters, quoting values and resolving the workspace', () => {
    expect(listQuery({})).toBe(`WorkflowType = 'conversationWorkflow' AND ExecutionStatus != 'ContinuedAsNew'`);
    expect(listQuery({ status: 'ended', workspace: 'rel/dir', model: "o'brien" })).toBe(
      `WorkflowType = 'conversationWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND DurableAgentStatus = 'ended' AND DurableAgentWorkspace = '${path.resolve('rel/dir')}' AND DurableAgentModel = 'o\\'brien'`,
    );
    expect(() => listQuery({ status: 'calling_model' })).toThrow(ListFilterError);
    expect(() => listQuery({ status: 'calling_model' })).toThrow(
      '--status must be one of running, awaiting_input, awaiting_permission, ended; got "calling_model".',
    );
  });

  it('shows the attributes as aligned columns, the run status when it did not end normally, "-" for older conversations', () => {
    const attributes = new TypedSearchAttributes([
      { key: STATUS_SEARCH_ATTRIBUTE, value: 'awaiting_input' },
      { key: TURNS_SEARCH_ATTRIBUTE, value: 4 },
      { key: COST_SEARCH_ATTRIBUTE, value: 0.06331 },
      { key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: 'Fix\nthe test' },
    ]);
    const startTime = new Date('2026-11-30T03:00:00.123Z');
    const running = listRow({ workflowId: 'conversation-a', status: { name: 'RUNNING' } as never, startTime, typedSearchAttributes: attributes });
    const terminated = listRow({ workflowId: 'b', status: { name: 'TERMINATED' } as never, startTime, typedSearchAttributes: attributes });
    const old = listRow({
      workflowId: 'conversation-old',
      status: { name: 'COMPLETED' } as never,
      startTime,
      typedSearchAttributes: new TypedSearchAttributes(),
    });
    expect(formatTable([LIST_HEADER, running, terminated, old])).toEqual([
      'ID                STATUS          TURNS  COST     LAST ACTIVITY         WORKSPACE  FIRST PROMPT',
      'conversation-a    awaiting_input  4      $0.0633  2026-11-30T03:00:00Z  -          "Fix the test"',
      'b                 terminated      4      $0.0633  2026-11-30T03:00:00Z  -          "Fix the test"',
      'conversation-old  completed       -      -        2026-11-30T03:00:00Z  -          -',
    ]);
  });
});

describe('the UI texts for a person who never used the CLI (issue 19, item 15)', () => {
  it('show what was asked and what was allowed or denied', () => {
    const details = formatCurrentDetails({
      phase: 'awaiting_input',
      tools: [],
      turn: 3,
      queryCount: 1,
      model: 'claude-sonnet-4-6',
      costUsd: 0.01,
      lastPrompt: 'Fix the *failing* test\nin test.js',
      decisions: [
        { toolName: 'Write', behavior: 'allow', decidedBy: 'user' },
        { toolName: 'Bash', behavior: 'deny', decidedBy: 'timeout' },
      ],
      lastAnswer: { text: 'Fixed.', isError: false },
    });
    expect(details.split('\n\n')).toEqual([
      '**awaiting_input** · turn 3 · query 1 · claude-sonnet-4-6 · $0.0100',
      '**Asked:** Fix the \\*failing\\* test in test.js',
      '**Last answer:** Fixed.',
      '**Permissions:** Write allowed · Bash denied (no answer in time)',
    ]);
  });
});

describe('the UI texts', () => {
  it('current details: phase and tools, turn, query, model and cost on one line, the last answer on one line', () => {
    expect(
      formatCurrentDetails({
        phase: 'running_tools',
        tools: ['Bash: node test.js', 'Read math.js'],
        turn: 7,
        queryCount: 2,
        model: 'claude-sonnet-4-6',
        costUsd: 0.01234,
        lastAnswer: { text: 'Fixed:\n\n`sum([])` *skipped* <b>', isError: false },
      }),
    ).toBe(
      '**running_tools** — Bash: node test.js, Read math.js · turn 7 · query 2 · claude-sonnet-4-6 · $0.0123\n\n**Last answer:** Fixed: `sum([])` \\*skipped\\* \\<b\\>',
    );
    expect(formatCurrentDetails({ phase: 'awaiting_input', tools: [], turn: 0, queryCount: 0, model: 'm', costUsd: 0 })).toBe(
      '**awaiting_input** · turn 0 · query 0 · m · $0.0000',
    );
    const long = formatCurrentDetails({
      phase: 'ended',
      tools: [],
      turn: 1,
      queryCount: 1,
      model: 'm',
      costUsd: 0,
      lastAnswer: { text: 'x'.repeat(1000), isError: true },
    });
    expect(long).toContain('**Last error:** ');
    expect(long.split('**Last error:** ')[1]).toHaveLength(400);
  });

  it('labels model calls uniquely over the conversation, and the idle timer by what it does', () => {
    expect(modelCallSummary('claude-sonnet-4-6', 7, 2)).toBe('claude-sonnet-4-6: turn 7 (query 2)');
    expect(idleTimerSummary(24 * 60 * 60 * 1000)).toBe('Waiting for input; ends the conversation after 1d idle');
    expect([250, 45_000, 90 * 60_000, 26 * 3_600_000 + 60_000].map(formatDuration)).toEqual(['250ms', '45s', '1h 30m', '1d 2h']);
  });

  it('static details keep their lines: a Markdown list', () => {
    const config = parseConversationConfig({ cwd: '/work/demo', model: 'claude-sonnet-4-6', fallbackModel: 'claude-haiku-4-5' });
    expect(staticDetails(config, 'Fix it\nplease')).toBe(
      [
        '- **model:** claude-sonnet-4-6 (fallback claude-haiku-4-5)',
        '- **workspace:** `/work/demo`',
        `- **max turns:** ${config.maxTurns}`,
        '- **first prompt:** Fix it please',
      ].join('\n'),
    );
  });

  it('a failed tool is named in its failure message; heartbeats and summaries name the call', () => {
    expect(toolCallSummary('Bash', { command: 'node test.js' })).toBe('Bash: node test.js');
    expect(toolCallSummary('Bash', { wrong: 1 })).toBe('Bash (invalid input)');
    expect(toolCallSummary('Frobnicate', {})).toBe('Frobnicate');
    expect(toolErrorMessage('Bash: node test.js', '\n\nError: expected 6\n    at line 4')).toBe('Bash: node test.js failed: Error: expected 6');
    expect(toolErrorMessage('Read a.txt', '')).toBe('Read a.txt failed: no output');
    expect(toolErrorMessage('Bash: x', 'y'.repeat(300))).toHaveLength('Bash: x failed: '.length + 200);
  });
});

describe('status of an ended conversation, without a worker', () => {
  it('is rebuilt from the result, or from the search attributes of a run that did not complete', () => {
    const lastResult = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Fixed it.',
      num_turns: 5,
      duration_ms: 3600,
      total_cost_usd: 0.0633,
      model: 'claude-sonnet-4-6',
      transitions: ['tool_use'],
    } as never;
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const closeTime = new Date('2026-11-30T03:10:00Z');
    const fromResult = closedConversationStatus(
      'c-1',
      { status: 'COMPLETED', closeTime },
      { conversationId: 'c-1', endedBy: 'end_signal', queryCount: 1, usage, totalCostUsd: 0.0633, lastResult },
    );
    expect(fromResult).toMatchObject({ phase: 'ended', ended: true, queryCount: 1, turnCount: 5, totalCostUsd: 0.0633, lastQueryTransitions: ['tool_use'] });
    const text = formatStatus(fromResult);
    expect(text).toContain('phase         ended');
    expect(text).toContain('Fixed it.');
    expect(text).toContain('closed        completed at 2026-11-30T03:10:00.000Z (from its result; no worker needed)');
    expect(text).not.toMatch(/^context /m);

    const attributes = new TypedSearchAttributes([
      { key: TURNS_SEARCH_ATTRIBUTE, value: 3 },
      { key: COST_SEARCH_ATTRIBUTE, value: 0.5 },
    ]);
    const terminated = closedConversationStatus('c-2', { status: 'TERMINATED', typedSearchAttributes: attributes });
    expect(terminated).toMatchObject({
      phase: 'ended',
      turnCount: 3,
      totalCostUsd: 0.5,
      closed: { executionStatus: 'terminated', answeredFrom: 'search_attributes' },
    });
  });
});
