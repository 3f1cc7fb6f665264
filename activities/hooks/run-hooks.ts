/**
 * The hook activities (issue 22 §4): `loadHookSettings` reads every command hook from Claude
 * Code's settings files, `runHooks` runs the commands the workflow selected for one event on the
 * shared runner (sandbox, timeout, heartbeats, bounded output) and returns what each did. The
 * workflow decides with decideHookOutcome (common/hooks.ts) on this recorded result, so a replay
 * never runs a hook again.
 */
import os from 'node:os';
import type { LoadHookSettingsInput, LoadHookSettingsResult, RunHooksInput, RunHooksResult } from '../../common/activity-types';
import { type HookRunOutcome, type HookSettings, hookInputJson, mergeHookSettings, parseHookJson, parseHookSettings } from '../../common/hooks';
import { SETTING_SOURCES } from '../../common/permissions';
import { readJsonObjectFile, settingsFiles } from '../settings';
import { boundHookOutput, runHookProcesses } from './runner';

export interface HookActivitiesDeps {
  /** Root for persisted hook output (the worker's state dir). */
  stateDir: string;
  home?: string;
}

export function createHookActivities(deps: HookActivitiesDeps) {
  return {
    loadHookSettings: (input: LoadHookSettingsInput) => loadHookSettings(input, deps.home ?? os.homedir()),
    runHooks: (input: RunHooksInput) => runHooksIn(deps.stateDir, input),
  };
}

/**
 * Hooks from the user's, the project's and the local settings (Claude Code reads all three),
 * filtered by `--setting-sources`; a bad file or entry is a warning naming it, the rest is kept.
 * (A file that is not valid JSON stops the session context first, with its position.) Issue 29:
 * the project's and local files' hooks only when the session context recorded the workspace as
 * trusted (`input.trusted`).
 */
export async function loadHookSettings(input: LoadHookSettingsInput, home = os.homedir()): Promise<LoadHookSettingsResult> {
  const all: HookSettings[] = [];
  const warnings: string[] = [];
  for (const { source, file } of settingsFiles(input.cwd, input.settingSources ?? SETTING_SOURCES, home)) {
    if (source !== 'user' && input.trusted !== true) continue;
    const read = await readJsonObjectFile(file);
    if (read.kind !== 'object') continue;
    const parsed = parseHookSettings(read.value.hooks, file);
    all.push(parsed.hooks);
    warnings.push(...parsed.problems);
  }
  return { hooks: mergeHookSettings(all), warnings };
}

async function runHooksIn(stateDir: string, input: RunHooksInput): Promise<RunHooksResult> {
  const stdin = hookInputJson(
    {
      session_id: input.conversationId,
      transcript_path: input.transcriptPath ?? '',
      cwd: input.cwd,
      ...(input.permissionMode ? { permission_mode: input.permissionMode } : {}),
    },
    input.event,
  );
  const outcomes = await runHookProcesses<HookRunOutcome>(
    stateDir,
    {
      conversationId: input.conversationId,
      cwd: input.cwd,
      stdin,
      commands: input.commands,
      additionalDirectories: input.additionalDirectories,
      settingSources: input.settingSources,
      sandbox: input.sandbox,
      label: `${input.event.hook_event_name} hooks cancelled`,
    },
    async (result) => {
      if (result.kind === 'not-run') return { command: result.command, exitCode: null, stdout: '', stderr: '', error: result.message };
      const { run } = result;
      const json = parseHookJson(run.stdout);
      return {
        command: result.command,
        exitCode: run.exitCode,
        stdout: await boundHookOutput(run.stdout, run.truncated, () => result.save('stdout', run.stdout)),
        stderr: await boundHookOutput(run.stderr, run.truncated, () => result.save('stderr', run.stderr)),
        ...(run.timedOut ? { timedOut: true } : {}),
        ...(result.notices ? { notices: result.notices } : {}),
        // Parsed from the whole output: a long JSON answer (a big updatedInput) is still read.
        ...(json && JSON.stringify(json).length <= MAX_HOOK_JSON_CHARS ? { json } : {}),
      };
    },
  );
  return { outcomes };
}

/** A JSON answer larger than this is not recorded (it would bloat history); its bounded stdout stays. */
const MAX_HOOK_JSON_CHARS = 100_000;
