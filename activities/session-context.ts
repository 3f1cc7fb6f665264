/**
 * loadSessionContext activity (seed §2.5 getSystemContext / getUserContext): read once per
 * session and kept in workflow state, so every model call of the session sees the same
 * snapshot. CLAUDE.md files from the workspace up to the filesystem root (and ~/.claude), a
 * truncated git status, the date, and the settings (permission rules, Stop hooks; settings.ts).
 *
 * Issue 29: the workspace's trust is decided here, where its settings are read, and recorded with
 * the context (the workflow passes it on to the hook and MCP loaders; it never looks again). A
 * settings file that cannot be read ends the load with a non-retryable `InvalidSettings` failure:
 * the conversation must not run tools with fewer rules than the person wrote.
 */
import { execFileInSandbox } from './sandbox';
import { readFile, readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { INVALID_SETTINGS_FAILURE, type LoadSessionContextInput, type SessionContext } from '../common/activity-types';
import type { AgentDefinition } from '../common/agents';
import { parseAgentFile } from './agent-files';
import { readCustomCommands } from './custom-commands';
import { readSkillEntries, skillSources } from './skills';
import { loadPlugins } from './plugins';
import { formatMemoryFiles, loadMemoryFiles } from './memory-files';
import { SETTING_SOURCES } from '../common/permissions';
import { readDenyPatterns } from '../common/tool-access';
import { pathMatchesRule } from '../common/path-rules';
import { loadSettings } from './settings';
import { decideWorkspaceTrust, describeIgnoredSettings, settingsIgnoredWithoutTrust, untrustedWorkspaceLine } from './workspace-trust';

/** seed §2.5: the one direct size control in the system prompt. */
export const MAX_STATUS_CHARS = 2_000;

export async function loadSessionContext(input: LoadSessionContextInput, home = os.homedir()): Promise<SessionContext> {
  const cwd = path.resolve(input.cwd);
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw ApplicationFailure.nonRetryable(`Workspace directory does not exist on this worker: ${cwd}`, 'WorkspaceNotFound');
  }
  const sources = input.settingSources ?? SETTING_SOURCES;
  const workspaceTrust = await decideWorkspaceTrust(cwd, home, input.trusted);
  const settings = await loadSettings(cwd, sources, home, workspaceTrust);
  if (settings.errors.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `The settings cannot be read, so the conversation does not run with fewer rules than they hold. Fix ${settings.errors.length === 1 ? 'this' : 'these'} and start again:\n${settings.errors.join('\n')}`,
      INVALID_SETTINGS_FAILURE,
    );
  }
  if (!workspaceTrust.trusted) {
    const ignored = describeIgnoredSettings(await settingsIgnoredWithoutTrust(cwd, sources, home), cwd);
    if (ignored) workspaceTrust.ignored = ignored;
  }
  // The file tools' own reading of the Read deny rules (a bare `Read` denies every file).
  const readDeny = readDenyPatterns(settings.permissions.deny);
  const memoryOptions = {
    home,
    workingDirectories: settings.permissions.additionalDirectories,
    isReadDenied: (realPath: string) => readDeny.some((pattern) => pathMatchesRule(pattern, realPath, { cwd, homeDir: home })),
  };
  // The workspace's own agents and commands are its content: read only once it is trusted (an agent
  // file sets a subagent's prompt, tools and model; a command the prompt a person's `/name` sends).
  const project = workspaceTrust.trusted;
  // ---- issue 33 §3: plugins (--plugin-dir, the user's enabled installed ones) ----
  const loadedPlugins = await loadPlugins({ cwd, pluginDirs: input.pluginDirs, home, trusted: project });
  if (loadedPlugins.errors.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `A plugin cannot be loaded, so the conversation does not start without it:\n${loadedPlugins.errors.join('\n')}`,
      INVALID_SETTINGS_FAILURE,
    );
  }
  const plugins = loadedPlugins.plugins;
  // ---- end plugins ----
  // Issue 33 §3: skills as their agents and commands (the workspace's only when trusted; a plugin's named `plugin:skill`).
  const [memory, git, agents, commands, skills] = await Promise.all([
    loadMemoryFiles(cwd, memoryOptions),
    readGitStatus(cwd),
    readAgents(cwd, home, { project, plugins }),
    readCustomCommands(cwd, home, { project, plugins }),
    readSkillEntries(skillSources(cwd, { home, trusted: project, plugins })),
  ]);
  const memoryFiles = memory.files;
  const warnings = [
    ...(workspaceTrust.ignored ? [untrustedWorkspaceLine(cwd, workspaceTrust.ignored)] : []),
    ...memory.notices,
    ...settings.warnings,
    ...loadedPlugins.warnings,
    ...agents.errors,
    ...commands.errors,
    ...skills.errors,
  ];
  return {
    cwd,
    claudeMd: formatMemoryFiles(memoryFiles),
    claudeMdFiles: memoryFiles.length > 0 ? memoryFiles.map((file) => file.path) : undefined,
    commands: commands.commands.length > 0 ? commands.commands : undefined,
    gitStatus: git?.status,
    isGitRepo: git !== undefined,
    currentDate: `Today's date is ${localIsoDate(new Date())}.`,
    platform: `${os.platform()} ${os.release()}`,
    shell: path.basename(process.env.SHELL ?? 'bash'),
    stopHooks: settings.stopHooks,
    agents: agents.agents,
    ...(skills.skills.length > 0 ? { skills: skills.skills } : {}),
    warnings: warnings.length > 0 ? warnings : undefined,
    permissionSettings: settings.permissions,
    workspaceTrust,
    // The skills seam: skillSources(cwd, { home, trusted, plugins: context.plugins }).
    ...(plugins.length > 0 && {
      plugins: plugins.map((plugin) => ({ name: plugin.name, root: plugin.root, origin: plugin.origin, ...(plugin.id && { id: plugin.id }) })),
    }),
    ...(settings.alwaysThinkingEnabled !== undefined ? { alwaysThinkingEnabled: settings.alwaysThinkingEnabled } : {}),
  };
}

/**
 * Custom subagents (Claude Code's `.claude/agents/*.md`): the user's (~/.claude/agents) and the
 * workspace's (only when `project`: a trusted workspace), the workspace's winning on a name clash.
 * A malformed file is reported, not fatal.
 */
export async function readAgents(
  cwd: string,
  home = os.homedir(),
  { project = true, plugins = [] }: { project?: boolean; plugins?: ReadonlyArray<{ name: string; agentDirectories: string[] }> } = {},
): Promise<{ agents: AgentDefinition[]; errors: string[] }> {
  const byName = new Map<string, AgentDefinition>();
  const errors: string[] = [];
  // Issue 33: a plugin's agents are `plugin-name:agent` (Claude Code's naming), listed before the user's.
  const directories = [
    ...plugins.flatMap((plugin) => plugin.agentDirectories.map((directory) => ({ directory, plugin: plugin.name }))),
    { directory: path.join(home, '.claude', 'agents') },
    ...(project ? [{ directory: path.join(cwd, '.claude', 'agents') }] : []),
  ];
  for (const { directory, plugin } of directories as Array<{ directory: string; plugin?: string }>) {
    const files = (await readdir(directory).catch(() => [] as string[])).filter((file) => file.endsWith('.md')).sort();
    for (const file of files) {
      const source = path.join(directory, file);
      try {
        const parsed = parseAgentFile(await readFile(source, 'utf8'), source);
        const agent = plugin ? { ...parsed, name: `${plugin}:${parsed.name}` } : parsed;
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

/**
 * git in the workspace runs the repository's config, which can run programs (`core.fsmonitor`,
 * filters): the workspace is untrusted (issue 17), so it runs in Bash's sandbox, with no network.
 */
async function git(cwd: string, args: string[]): Promise<string> {
  return (await execFileInSandbox('git', args, { cwd, timeoutMs: 10_000 })).trim();
}

/**
 * seed §2.5 getSystemContext's git status, with the fields Claude Code gives: current branch,
 * main branch (for PRs), the git user, a truncated `status --short` and the last commits.
 */
export async function readGitStatus(cwd: string): Promise<{ status: string } | undefined> {
  const inside = await git(cwd, ['rev-parse', '--is-inside-work-tree']).catch(() => 'false');
  if (inside !== 'true') return undefined;
  const [branch, mainBranch, userName, status, log] = await Promise.all([
    git(cwd, ['branch', '--show-current']).catch(() => ''),
    defaultBranch(cwd),
    git(cwd, ['config', 'user.name']).catch(() => ''),
    git(cwd, ['status', '--short']).catch(() => ''),
    git(cwd, ['log', '--oneline', '-n', '5']).catch(() => ''),
  ]);
  const truncated = status.length > MAX_STATUS_CHARS ? `${status.slice(0, MAX_STATUS_CHARS)}\n... (truncated)` : status;
  return {
    status: [
      `Current branch: ${branch || '(detached)'}`,
      `Main branch (you will usually use this for PRs): ${mainBranch}`,
      ...(userName ? [`Git user: ${userName}`] : []),
      `Status:\n${truncated || '(clean)'}`,
      `Recent commits:\n${log || '(none)'}`,
    ].join('\n\n'),
  };
}

/**
 * The repository's default branch, as Claude Code finds it: origin's HEAD, else `main` or
 * `master` if one exists (on origin, then locally), else `main`.
 */
export async function defaultBranch(cwd: string): Promise<string> {
  const originHead = await git(cwd, ['symbolic-ref', '--short', 'refs/remotes/origin/HEAD']).catch(() => '');
  if (originHead.startsWith('origin/')) return originHead.slice('origin/'.length);
  for (const ref of ['refs/remotes/origin/main', 'refs/remotes/origin/master', 'refs/heads/main', 'refs/heads/master']) {
    const exists = await git(cwd, ['rev-parse', '--verify', '--quiet', ref]).then(
      () => true,
      () => false,
    );
    if (exists) return ref.split('/').pop()!;
  }
  return 'main';
}
