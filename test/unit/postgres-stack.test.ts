/**
 * The PostgreSQL stack's pure parts (issue 24): search attribute values SQL visibility can store, the set fitting
 * its columns, and the one dynamic config file and server version shared with docker-compose.yml.
 * The stack itself runs in test/integration/postgres-stack.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  KEYWORD_MAX_CHARS,
  MODEL_SEARCH_ATTRIBUTE,
  SEARCH_ATTRIBUTES,
  TEXT_MAX_CHARS,
  sqlSafeKeyword,
  sqlSafeSearchAttributes,
  sqlSafeText,
  startSearchAttributes,
} from '../../common/search-attributes';
import { listQuery } from '../../client/commands/list';
import { SQL_VISIBILITY_LIMITS, sqlVisibilityLimitProblem } from '../../infra/namespace-setup';
import { DYNAMIC_CONFIG_FILE, serverConfigYaml } from '../../infra/postgres-stack';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../../infra/temporal-server';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Characters PostgreSQL's `::tsvector` cast treats specially (quote, escape, position): measured on PostgreSQL 15. */
const TSVECTOR_SPECIAL = /['\\:]/;

describe('search attribute values on SQL visibility', () => {
  it('Text: the prompt that failed every visibility write on PostgreSQL keeps its words, without tsvector syntax', () => {
    const prompt = 'Fix the typo in greeting.txt [[scenario:foundation-edit]]';
    expect(sqlSafeText(prompt)).toBe('Fix the typo in greeting.txt [[scenario foundation-edit]]');
    expect(sqlSafeText("don't C:\\Users\\me 'quoted'")).toBe('don’t C Users me ’quoted’');
    for (const value of [prompt, "a'b\\c:d", ':::', '\\', "'"]) expect(sqlSafeText(value)).not.toMatch(TSVECTOR_SPECIAL);
    expect(sqlSafeText('  many\n\tlines  \r\n here ')).toBe('many lines here');
  });

  it('Text and Keyword: no NUL, no lone surrogate, never longer than the column (cut between code points)', () => {
    expect(sqlSafeText('a\u0000b')).toBe('ab');
    expect(sqlSafeKeyword('/tmp/\u0000x')).toBe('/tmp/x');
    expect(sqlSafeKeyword('a\uD800b\uDC00c')).toBe('a\uFFFDb\uFFFDc');
    expect(sqlSafeKeyword('😀')).toBe('😀');
    const emoji = '😀'.repeat(KEYWORD_MAX_CHARS + 5);
    expect(Array.from(sqlSafeKeyword(emoji))).toHaveLength(KEYWORD_MAX_CHARS);
    expect(sqlSafeKeyword(emoji)).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(Array.from(sqlSafeText('x'.repeat(2 * TEXT_MAX_CHARS)))).toHaveLength(TEXT_MAX_CHARS);
    // The longest Text fits one tsvector word (2047 bytes) even if it is a single 4-byte-character word.
    expect(Buffer.byteLength(sqlSafeText('😀'.repeat(TEXT_MAX_CHARS * 2)))).toBeLessThanOrEqual(2047);
    const path255 = `/${'d'.repeat(300)}`;
    expect(sqlSafeKeyword(path255)).toBe(path255.slice(0, KEYWORD_MAX_CHARS));
  });

  it('every pair: values fixed by type; numbers and dates JSON cannot carry are left out', () => {
    const list = defineSearchAttributeKey('L', SearchAttributeType.KEYWORD_LIST);
    const int = defineSearchAttributeKey('I', SearchAttributeType.INT);
    const double = defineSearchAttributeKey('D', SearchAttributeType.DOUBLE);
    const date = defineSearchAttributeKey('T', SearchAttributeType.DATETIME);
    const pairs = sqlSafeSearchAttributes([
      { key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: 'a:b' },
      { key: MODEL_SEARCH_ATTRIBUTE, value: 'm\u0000' },
      { key: list, value: ['x\u0000', 'y'] },
      { key: int, value: 1.5 },
      { key: double, value: Number.NaN },
      { key: date, value: new Date(Number.NaN) },
      { key: int, value: 7 },
      { key: double, value: 0.25 },
      { key: date, value: new Date(0) },
    ]);
    expect(pairs.map((pair) => [pair.key.name, pair.value])).toEqual([
      ['DurableAgentFirstPrompt', 'a b'],
      ['DurableAgentModel', 'm'],
      ['L', ['x', 'y']],
      ['I', 7],
      ['D', 0.25],
      ['T', new Date(0)],
    ]);
  });

  it('start values: a long workspace is stored cut, and `list --workspace` filters with the same cut value', () => {
    const workspace = `/${'w'.repeat(400)}`;
    const pairs = sqlSafeSearchAttributes(startSearchAttributes({ status: 'running', model: 'm', firstPrompt: 'p', workspace, now: new Date(0) }));
    const stored = pairs.find((pair) => pair.key.name === 'DurableAgentWorkspace')!.value as string;
    expect(stored).toHaveLength(KEYWORD_MAX_CHARS);
    expect(listQuery({ workspace })).toContain(`DurableAgentWorkspace = '${stored}'`);
  });

  it('the registered set fits SQL visibility, and a set that does not is refused with the reason', () => {
    expect(sqlVisibilityLimitProblem(SEARCH_ATTRIBUTES)).toBeUndefined();
    const texts = Array.from({ length: SQL_VISIBILITY_LIMITS.TEXT + 1 }, (_, i) => ({ name: `T${i}`, type: SearchAttributeType.TEXT }));
    expect(sqlVisibilityLimitProblem(texts)).toMatch(/4 TEXT attributes \(T0, T1, T2, T3\); SQL visibility has 3/);
  });
});

describe('one config for docker-compose and the PostgreSQL stack', () => {
  const compose = readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');

  it('docker-compose mounts the shared dynamic config file and runs the same server and UI versions', () => {
    expect(DYNAMIC_CONFIG_FILE).toBe(path.join(REPO_ROOT, 'infra', 'temporal', 'dynamicconfig.yaml'));
    expect(compose).toContain('./infra/temporal/dynamicconfig.yaml:/etc/temporal/config/dynamicconfig/durable-agent.yaml:ro');
    expect(compose).toContain('DYNAMIC_CONFIG_FILE_PATH: /etc/temporal/config/dynamicconfig/durable-agent.yaml');
    expect(compose).toContain(`temporalio/server:\${TEMPORAL_VERSION:-${TEMPORAL_SERVER_VERSION}}`);
    expect(compose).toContain(`temporalio/ui:\${TEMPORAL_UI_VERSION:-${TEMPORAL_UI_VERSION}}`);
    // No second copy of a dynamic config key in the compose file.
    expect(compose).not.toContain('history.transferProcessorMaxPollRPS');
  });

  it('the server config points at that file and at PostgreSQL with SQL visibility', () => {
    const ports = {
      frontend: 1,
      frontendMembership: 2,
      frontendHttp: 3,
      history: 4,
      historyMembership: 5,
      matching: 6,
      matchingMembership: 7,
      worker: 8,
      workerMembership: 9,
    };
    const yaml = serverConfigYaml({ ports, pgPort: 5555, logLevel: 'warn', dynamicConfigFile: DYNAMIC_CONFIG_FILE });
    expect(yaml).toContain(`filepath: "${DYNAMIC_CONFIG_FILE}"`);
    expect(yaml).toContain('visibilityStore: postgres-visibility');
    expect(yaml.match(/pluginName: postgres12/g)).toHaveLength(2);
    expect(yaml).toContain('connectAddr: "127.0.0.1:5555"');
  });
});
