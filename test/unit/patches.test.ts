/**
 * The replay-switch registry (workflows/patches.ts) is the only way to a patch, and it is empty
 * unless a hotfix needs one (upgrades go by Worker Versioning, docs/deployment.md): no workflow
 * module calls Temporal's `patched()` / `deprecatePatch()` itself or passes a literal, every id in
 * the registry is used, and every patch a recorded history holds is registered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCHES, type Patch } from '../../workflows/patches';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

interface Source {
  file: string;
  text: string;
}

/** Workflow-side sources (the bundle), without the registry itself; comments stripped. */
const sources: Source[] = [...sourceFiles(path.join(root, 'workflows')), ...sourceFiles(path.join(root, 'common'))]
  .filter((file) => !file.endsWith(path.join('workflows', 'patches.ts')))
  .map((file) => ({ file: path.relative(root, file), text: stripComments(fs.readFileSync(file, 'utf8')) }));

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Files that import `patched` / `deprecatePatch` from Temporal, or use them through a namespace import of it. */
function bypassesRegistry(files: Source[]): string[] {
  return files
    .filter(({ text }) => {
      if (/import\s*{[^}]*\b(patched|deprecatePatch)\b[^}]*}\s*from\s*['"]@temporalio\/workflow['"]/.test(text)) return true;
      const namespace = /import\s*\*\s*as\s*(\w+)\s*from\s*['"]@temporalio\/workflow['"]/.exec(text)?.[1];
      return namespace !== undefined && new RegExp(`\\b${namespace}\\s*\\.\\s*(patched|deprecatePatch)\\b`).test(text);
    })
    .map(({ file }) => file);
}

/** Calls of `patched(...)` / `deprecatePatch(...)` whose argument is not a registry entry. */
function callsWithoutEntry(files: Source[]): Array<{ file: string; argument: string }> {
  return files
    .flatMap(({ file, text }) => [...text.matchAll(/\b(?:patched|deprecatePatch)\s*\(([^)]*)\)/g)].map((match) => ({ file, argument: match[1]!.trim() })))
    .filter(({ argument }) => !/^PATCHES\.\w+$/.test(argument));
}

/** Registry names used as `PATCHES.<name>`. */
function usedEntries(files: Source[]): Set<string> {
  return new Set(files.flatMap(({ text }) => [...text.matchAll(/\bPATCHES\.(\w+)/g)].map((match) => match[1]!)));
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

const entries: Array<[string, Patch]> = Object.entries(PATCHES as Record<string, Patch>);

describe('workflows/patches.ts', () => {
  it('has unique ids, each with a note and the commit it came in', () => {
    expect(new Set(entries.map(([, patch]) => patch.id)).size).toBe(entries.length);
    for (const [, patch] of entries) {
      expect(patch.note.length).toBeGreaterThan(20);
      expect(patch.since).toMatch(/^\d{4}-\d{2}-\d{2} [0-9a-f]{7,}$/);
    }
  });

  it('is the only module that imports patched() or deprecatePatch() from Temporal', () => {
    expect(bypassesRegistry(sources)).toEqual([]);
  });

  it('is called with a registry entry, never a literal', () => {
    expect(callsWithoutEntry(sources)).toEqual([]);
  });

  it('has every entry in use, and no use of an entry it does not have', () => {
    const used = usedEntries(sources);
    expect([...used].filter((name) => !(name in PATCHES))).toEqual([]);
    expect(entries.map(([name]) => name).filter((name) => !used.has(name))).toEqual([]);
  });

  it('has every patch a recorded history holds (a history with an unregistered marker would fail its replay)', () => {
    const ids = new Set(entries.map(([, patch]) => patch.id));
    const histories = fs.readdirSync(path.join(root, 'test/histories')).filter((name) => name.endsWith('.json'));
    expect(histories.length).toBeGreaterThan(0);
    const recorded = histories.flatMap((name) => markerIds(path.join(root, 'test/histories', name)));
    expect([...new Set(recorded)].filter((id) => !ids.has(id))).toEqual([]);
  });

  it('the checks above catch a bypass: a literal id, a direct import, a namespace import, an unregistered entry', () => {
    const direct: Source = { file: 'direct.ts', text: "import { condition, patched } from '@temporalio/workflow';\nif (patched('my-fix')) run();" };
    const namespace: Source = { file: 'namespace.ts', text: "import * as wf from '@temporalio/workflow';\nif (wf.patched(PATCHES.myFix)) run();" };
    const registered: Source = {
      file: 'registered.ts',
      text: "import { PATCHES, patched } from './patches';\nif (patched(PATCHES.myFix)) run();\ndeprecatePatch(FIX);",
    };
    expect(bypassesRegistry([direct, namespace, registered])).toEqual(['direct.ts', 'namespace.ts']);
    expect(callsWithoutEntry([direct, registered])).toEqual([
      { file: 'direct.ts', argument: "'my-fix'" },
      { file: 'registered.ts', argument: 'FIX' },
    ]);
    expect([...usedEntries([namespace, registered])].filter((name) => !(name in PATCHES))).toEqual(['myFix']);
    const marker = (id: string) => ({
      markerRecordedEventAttributes: {
        markerName: 'core_patch',
        details: { 'patch-data': { payloads: [{ data: Buffer.from(JSON.stringify({ id, deprecated: false })).toString('base64') }] } },
      },
    });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'patches-test-')), 'history.json');
    fs.writeFileSync(file, JSON.stringify({ events: [{ eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' }, marker('my-fix')] }));
    expect(markerIds(file)).toEqual(['my-fix']);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
