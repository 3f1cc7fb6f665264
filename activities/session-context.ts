/**
 * loadSessionContext activity (seed §2.5 getSystemContext / getUserContext): read once per
 * session and kept in workflow state, so every model call of the session sees the same
 * snapshot. CLAUDE.md files from the workspace up to the filesystem root (and ~/.claude), a
 * truncated git status, the date, and the Stop hooks from `.claude/settings.json`.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApplicationFailure } from '@temporalio/common';
import type { SessionContext } from '../common/activity-types';
import { type AgentDefinition, parseAgentFile } from '../common/agents';
import { type StopHookMatcher, stopHooksSchema } from '../common/config';

const execFileAsync = promisify(execFile);
/** seed §2.5: the one direct size control in the system prompt. */
export const MAX_STATUS_CHARS = 2_000;

export async function loadSessionContext(input: { cwd: string }): Promise<SessionContext> {
  const cwd = path.resolve(input.cwd);
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw ApplicationFailure.nonRetryable(`Workspace directory does not exist on this worker: ${cwd}`, 'WorkspaceNotFound');
  }
  const [claudeMd, git, stopHooks, agents] = await Promise.all([readClaudeMds(cwd), readGitStatus(cwd), readStopHooks(cwd), readAgents(cwd)]);
  return {
    cwd,
    claudeMd,
    gitStatus: git?.status,
    isGitRepo: git !== undefined,
    currentDate: `Today's date is ${localIsoDate(new Date())}.`,
    platform: `${os.platform()} ${os.release()}`,
    shell: path.basename(process.env.SHELL ?? 'bash'),
    stopHooks,
    agents: agents.agents,
    warnings: agents.errors.length > 0 ? agents.errors : undefined,
  };
}

/**
 * Custom subagents (Claude Code's `.claude/agents/*.md`): the user's (~/.claude/agents) and the
 * workspace's, the workspace's winning on a name clash. A malformed file is reported, not fatal.
 */
export async function readAgents(cwd: string, home = os.homedir()): Promise<{ agents: AgentDefinition[]; errors: string[] }> {
  const byName = new Map<string, AgentDefinition>();
  const errors: string[] = [];
  for (const directory of [path.join(home, '.claude', 'agents'), path.join(cwd, '.claude', 'agents')]) {
    const files = (await readdir(directory).catch(() => [] as string[])).filter((file) => file.endsWith('.md')).sort();
    for (const file of files) {
      const source = path.join(directory, file);
      try {
        const agent = parseAgentFile(await readFile(source, 'utf8'), source);
        byName.set(agent.name, agent);
      } catch (error) {
        errors.push(`Agent file ignored: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return { agents: [...byName.values()], errors };
}

function localIsoDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

async function readClaudeMds(cwd: string): Promise<string | undefined> {
  const candidates: string[] = [path.join(os.homedir(), '.claude', 'CLAUDE.md')];
  const chain: string[] = [];
  for (let directory = cwd; ; directory = path.dirname(directory)) {
    chain.unshift(directory);
    if (path.dirname(directory) === directory) break;
  }
  for (const directory of chain) {
    candidates.push(path.join(directory, 'CLAUDE.md'), path.join(directory, '.claude', 'CLAUDE.md'));
  }
  candidates.push(path.join(cwd, 'CLAUDE.local.md'));
  const parts: string[] = [];
  for (const file of candidates) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text && text.trim()) parts.push(`Contents of ${file}:\n\n${text.trim()}`);
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, timeout: 10_000, maxBuffer: 4 * 1024 * 1024 });
  return stdout.trim();
}

async function readGitStatus(cwd: string): Promise<{ status: string } | undefined> {
  const inside = await git(cwd, ['rev-parse', '--is-inside-work-tree']).catch(() => 'false');
  if (inside !== 'true') return undefined;
  const [branch, status, log] = await Promise.all([
    git(cwd, ['branch', '--show-current']).catch(() => ''),
    git(cwd, ['status', '--short']).catch(() => ''),
    git(cwd, ['log', '--oneline', '-n', '5']).catch(() => ''),
  ]);
  const truncated = status.length > MAX_STATUS_CHARS ? `${status.slice(0, MAX_STATUS_CHARS)}\n... (truncated)` : status;
  return {
    status: [`Current branch: ${branch || '(detached)'}`, `Status:\n${truncated || '(clean)'}`, `Recent commits:\n${log || '(none)'}`].join('\n\n'),
  };
}

/** Stop hooks in Claude Code's settings format, from settings.json and settings.local.json. */
export async function readStopHooks(cwd: string): Promise<StopHookMatcher[]> {
  const hooks: StopHookMatcher[] = [];
  for (const name of ['settings.json', 'settings.local.json']) {
    const file = path.join(cwd, '.claude', name);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (!text) continue;
    let settings: { hooks?: { Stop?: unknown } };
    try {
      settings = JSON.parse(text);
    } catch (error) {
      throw ApplicationFailure.nonRetryable(`${file} is not valid JSON: ${(error as Error).message}`, 'InvalidSettings');
    }
    if (settings.hooks?.Stop === undefined) continue;
    const parsed = stopHooksSchema.safeParse(settings.hooks.Stop);
    if (!parsed.success) {
      throw ApplicationFailure.nonRetryable(
        `${file}: hooks.Stop is not in Claude Code's format ({hooks:[{type:"command",command}]}): ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
        'InvalidSettings',
      );
    }
    hooks.push(...parsed.data);
  }
  return hooks;
}
