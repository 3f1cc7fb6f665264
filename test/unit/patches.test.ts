/**
 * The replay-switch registry (workflows/patches.ts) is the only way to a patch: every id in it is
 * used, no workflow module calls Temporal's `patched()` / `deprecatePatch()` itself or passes a
 * literal, and every patch a recorded history holds is still registered.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCHES, PATCH_EPOCHS } from '../../workflows/patches';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Workflow-side sources (the bundle), without the registry itself; comments stripped. */
const sources = [...sourceFiles(path.join(root, 'workflows')), ...sourceFiles(path.join(root, 'common'))]
  .filter((file) => !file.endsWith(path.join('workflows', 'patches.ts')))
  .map((file) => ({ file: path.relative(root, file), text: stripComments(fs.readFileSync(file, 'utf8')) }));

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Ids of the patch markers a recorded history holds. */
function markerIds(file: string): string[] {
  const history = JSON.parse(fs.readFileSync(file, 'utf8')) as { events: Array<Record<string, any>> };
  return history.events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data ?? marker.details?.patch_data?.payloads?.[0]?.data;
    return typeof data === 'string' ? [JSON.parse(Buffer.from(data, 'base64').toString('utf8')).id as string] : [];
  });
}

describe('workflows/patches.ts', () => {
  it('has unique ids, each with a note and the commit it came in', () => {
    const entries = Object.values(PATCHES);
    expect(new Set(entries.map((patch) => patch.id)).size).toBe(entries.length);
    for (const patch of entries) {
      expect(patch.note.length).toBeGreaterThan(20);
      expect(patch.since).toMatch(/^\d{4}-\d{2}-\d{2} [0-9a-f]{7,}$/);
    }
  });

  it('is the only module that imports patched() or deprecatePatch() from Temporal', () => {
    const offenders = sources.filter(({ text }) => /import\s*{[^}]*\b(patched|deprecatePatch)\b[^}]*}\s*from\s*'@temporalio\/workflow'/.test(text));
    expect(offenders.map(({ file }) => file)).toEqual([]);
  });

  it('is called with a registry entry, never a literal', () => {
    const calls = sources.flatMap(({ file, text }) => [...text.matchAll(/\b(?:patched|deprecatePatch)\(([^)]*)\)/g)].map((match) => ({ file, argument: match[1]! })));
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter(({ argument }) => !/^PATCHES\.\w+$/.test(argument.trim()))).toEqual([]);
  });

  it('has every entry in use, and no use of an entry it does not have', () => {
    const used = new Set(sources.flatMap(({ text }) => [...text.matchAll(/\bPATCHES\.(\w+)/g)].map((match) => match[1]!)));
    expect([...used].filter((name) => !(name in PATCHES))).toEqual([]);
    expect(Object.keys(PATCHES).filter((name) => !used.has(name))).toEqual([]);
  });

  it('still has every patch a recorded history holds (a removed one would fail its replay)', () => {
    const ids = new Set<string>([...Object.values(PATCHES).map((patch) => patch.id), ...PATCH_EPOCHS.map((epoch) => epoch.id)]);
    const histories = fs.readdirSync(path.join(root, 'test/histories')).filter((name) => name.endsWith('.json'));
    const recorded = histories.flatMap((name) => markerIds(path.join(root, 'test/histories', name)));
    expect(recorded.length).toBeGreaterThan(0);
    expect([...new Set(recorded)].filter((id) => !ids.has(id))).toEqual([]);
  });

  describe('patch epochs', () => {
    it('have their own ids, a note and a date, and cover registered switches once each', () => {
      const patchIds = new Set<string>(Object.values(PATCHES).map((patch) => patch.id));
      expect(new Set(PATCH_EPOCHS.map((epoch) => epoch.id)).size).toBe(PATCH_EPOCHS.length);
      for (const epoch of PATCH_EPOCHS) {
        expect(patchIds.has(epoch.id)).toBe(false);
        expect(epoch.note.length).toBeGreaterThan(20);
        expect(epoch.since).toMatch(/^\d{4}-\d{2}-\d{2} /);
        expect(epoch.covers.filter((name) => !(name in PATCHES))).toEqual([]);
        expect(new Set(epoch.covers).size).toBe(epoch.covers.length);
      }
    });

    it('each covers everything the one before it covered (a run on a newer epoch takes at least as many switches)', () => {
      for (let index = 1; index < PATCH_EPOCHS.length; index++) {
        const newer = new Set(PATCH_EPOCHS[index]!.covers);
        expect(PATCH_EPOCHS[index - 1]!.covers.filter((name) => !newer.has(name))).toEqual([]);
      }
    });

    it('the newest covers every registered switch: a new switch comes with a new epoch, so a new run asks none mid-run', () => {
      expect([...PATCH_EPOCHS.at(-1)!.covers].sort()).toEqual(Object.keys(PATCHES).sort());
    });

    it('are decided first thing in every workflow entry point that asks a switch', () => {
      const entry = sources.find(({ file }) => file === path.join('workflows', 'conversation.ts'))!.text;
      const body = entry.slice(entry.indexOf('export async function conversationWorkflow'));
      const firstStatement = body.slice(body.indexOf('{') + 1).trim().split(';')[0];
      expect(firstStatement).toBe('decidePatchEpoch()');
      // The other entry point asks no switch (if it starts to, it must decide the epoch first too).
      const cronFire = sources.find(({ file }) => file === path.join('workflows', 'cron-fire.ts'))!.text;
      expect(/\b(?:patched|deprecatePatch)\(/.test(cronFire) && !/decidePatchEpoch\(\)/.test(cronFire)).toBe(false);
    });
  });
});
