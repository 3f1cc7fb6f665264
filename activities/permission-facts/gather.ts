/**
 * The gatherPermissionFacts activity (issue 17, style §20): on the workspace's host, parse each
 * Bash command with the real grammar and resolve every path a call touches to its real path. The
 * workflow's rule engine decides on the recorded result. Never throws for a call it cannot
 * understand: a Bash command it cannot parse comes back with a problem, which asks.
 */
import os from 'node:os';
import type { CallFacts, GatherFactsInput, GatherFactsResult } from '../../common/permission-facts';
import { getToolSpec } from '../../common/tool-specs';
import { gatherBashFacts } from './bash-facts';
import { gatherPathFacts, resolvePathFact } from './paths';

/** Facts of one call (also used by a model call's local phase for the reads it prefetches). */
export async function gatherCallFacts(call: GatherFactsInput['calls'][number], cwd: string, homeDir = os.homedir()): Promise<CallFacts> {
  const parsed = getToolSpec(call.name)?.inputSchema.safeParse(call.input);
  if (!parsed?.success) return { toolUseId: call.toolUseId };
  if (call.name === 'Bash') {
    const command = (parsed.data as { command: string }).command;
    try {
      const bash = await gatherBashFacts(command, { cwd, homeDir, resolve: (literal, base) => resolvePathFact(literal, base, homeDir) });
      return { toolUseId: call.toolUseId, bash };
    } catch (error) {
      // Fail closed: what could not be examined asks.
      return { toolUseId: call.toolUseId, bash: { problems: [`the command could not be examined (${(error as Error).message})`], commands: [] } };
    }
  }
  const paths = await gatherPathFacts(call.name, parsed.data, cwd, homeDir);
  return { toolUseId: call.toolUseId, ...(paths ? { paths } : {}) };
}

export async function gatherPermissionFacts(input: GatherFactsInput): Promise<GatherFactsResult> {
  const facts = await Promise.all(input.calls.map((call) => gatherCallFacts(call, input.cwd, input.homeDir)));
  return { facts };
}
