/**
 * Namespace and search attributes on a self-hosted Temporal server: the one place that registers
 * {@link SEARCH_ATTRIBUTES} (common/search-attributes.ts) on servers the CLI dev server is not — the PostgreSQL stack
 * (infra/postgres-stack.ts) and docker-compose.yml's `temporal-create-search-attributes` service, which runs this file
 * in the worker image:
 *
 *   tsx infra/namespace-setup.ts            (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE; waits up to 4 min for the server)
 *
 * Idempotent: an existing namespace and already registered attributes are left as they are. Checks first that the
 * set fits SQL visibility's columns per type (PostgreSQL/MySQL/SQLite: 10 Keyword, 3 each of the other types), so a
 * set that cannot be registered is refused with the reason instead of failing half-way.
 */
import { Connection } from '@temporalio/client';
import { type SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The server's enum for each SDK search attribute type. */
export const INDEXED_VALUE_TYPES: Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType> = {
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** Custom search attribute columns per type in SQL visibility (schema/postgresql/v12/visibility/schema.sql, 1.31). */
export const SQL_VISIBILITY_LIMITS: Record<SearchAttributeType, number> = {
  TEXT: 3,
  KEYWORD: 10,
  INT: 3,
  DOUBLE: 3,
  BOOL: 3,
  DATETIME: 3,
  KEYWORD_LIST: 3,
};

/** Why `keys` do not fit SQL visibility, or undefined when they do. Pure. */
export function sqlVisibilityLimitProblem(keys: ReadonlyArray<{ name: string; type: SearchAttributeType }>): string | undefined {
  const problems: string[] = [];
  for (const [type, limit] of Object.entries(SQL_VISIBILITY_LIMITS) as Array<[SearchAttributeType, number]>) {
    const names = keys.filter((key) => key.type === type).map((key) => key.name);
    if (names.length > limit) problems.push(`${names.length} ${type} attributes (${names.join(', ')}); SQL visibility has ${limit}`);
  }
  return problems.length ? `The search attributes do not fit SQL visibility: ${problems.join('; ')}.` : undefined;
}

export interface NamespaceSetupOptions {
  namespace?: string;
  /** Retention of closed conversations' histories for a new namespace. Default 3 days. */
  retentionDays?: number;
  log?: (line: string) => void;
}

/** Creates `namespace` if it is missing and registers every {@link SEARCH_ATTRIBUTES} entry it lacks; waits until the server lists them. */
export async function setUpNamespace(connection: Connection, options: NamespaceSetupOptions = {}): Promise<void> {
  const namespace = options.namespace ?? 'default';
  const log = options.log ?? (() => undefined);
  const problem = sqlVisibilityLimitProblem(SEARCH_ATTRIBUTES);
  if (problem) throw new Error(problem);

  const exists = await connection.workflowService.describeNamespace({ namespace }).then(
    () => true,
    (error: { code?: number }) => {
      if (error.code === 5 /* NOT_FOUND */) return false;
      throw error;
    },
  );
  if (!exists) {
    const days = options.retentionDays ?? 3;
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(days * 24 * 3600 * 1000) })
      .catch((error: { code?: number }) => {
        if (error.code !== 6 /* ALREADY_EXISTS: someone else created it meanwhile */) throw error;
      });
    log(`created namespace ${namespace} (retention ${days} days)`);
  }
  // A new namespace takes a moment to reach every service's cache.
  await waitFor(async () => {
    await connection.workflowService.describeNamespace({ namespace });
    await connection.operatorService.listSearchAttributes({ namespace });
    return true;
  }, `namespace ${namespace} to be ready`);

  const registered = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.filter((key) => !(key.name in (registered.customAttributes ?? {})));
  for (const key of SEARCH_ATTRIBUTES) {
    const type = registered.customAttributes?.[key.name];
    if (type !== undefined && type !== null && type !== INDEXED_VALUE_TYPES[key.type]) {
      throw new Error(
        `Search attribute ${key.name} is registered in namespace ${namespace} as ${IndexedValueType[type]}, but durable-agent needs ${key.type}. ` +
          'Remove it (temporal operator search-attribute remove) and set up again.',
      );
    }
  }
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_VALUE_TYPES[key.type]])),
    });
    log(`registered search attributes ${missing.map((key) => `${key.name} (${key.type})`).join(', ')} in namespace ${namespace}`);
  }
  await waitFor(async () => {
    const now = await connection.operatorService.listSearchAttributes({ namespace });
    return SEARCH_ATTRIBUTES.every((key) => key.name in (now.customAttributes ?? {}));
  }, `the search attributes to be listed in namespace ${namespace}`);
}

async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await probe()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Connects to `address`, retrying until it answers (the server may still be starting) or `timeoutMs` passes. */
export async function connectWhenUp(address: string, timeoutMs: number): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
      return connection;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`No Temporal server answers at ${address} after ${Math.round(timeoutMs / 1000)} s: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

if (require.main === module) {
  const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const log = (line: string) => console.log(`[namespace-setup] ${line}`);
  (async () => {
    const connection = await connectWhenUp(address, 240_000);
    try {
      await setUpNamespace(connection, { namespace, log });
      log(`namespace ${namespace} at ${address} has ${SEARCH_ATTRIBUTES.map((key) => `${key.name} (${key.type})`).join(', ')}`);
    } finally {
      await connection.close();
    }
  })().catch((error: Error) => {
    console.error(`[namespace-setup] ${error.message}`);
    process.exit(1);
  });
}
