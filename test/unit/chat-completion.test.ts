/** Tab completion of `/` commands and `@` files (client/chat/completion.ts), with real ripgrep on real files. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_TTL_MS, MAX_CANDIDATES, completeInput } from '../../client/chat/completion';

const COMMANDS = [
  { name: 'help', description: 'Show help' },
  { name: 'clear', description: 'Clear the conversation' },
  { name: 'compact', description: 'Compact the conversation' },
  { name: 'cost', description: 'Show the cost' },
  { name: 'frontend:test', description: 'Run the frontend tests (project)' },
  { name: 'exit', description: 'Exit' },
];

let root: string;
let cwd: string;
let outside: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'completion-'));
  cwd = path.join(root, 'work');
  outside = path.join(root, 'outside');
  await mkdir(path.join(cwd, 'src', 'components'), { recursive: true });
  await mkdir(path.join(cwd, 'node_modules', 'left-pad'), { recursive: true });
  await mkdir(path.join(cwd, '.git'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(cwd, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(path.join(cwd, '.gitignore'), 'node_modules/\n*.log\n');
  await writeFile(path.join(cwd, 'README.md'), '# hi\n');
  await writeFile(path.join(cwd, 'package.json'), '{}\n');
  await writeFile(path.join(cwd, 'debug.log'), 'noise\n');
  await writeFile(path.join(cwd, '.env.example'), 'X=1\n');
  await writeFile(path.join(cwd, 'src', 'index.ts'), 'export {};\n');
  await writeFile(path.join(cwd, 'src', 'components', 'Button.tsx'), 'export {};\n');
  await writeFile(path.join(cwd, 'src', 'components', 'button.test.tsx'), 'export {};\n');
  await writeFile(path.join(cwd, 'node_modules', 'left-pad', 'index.js'), '\n');
  await writeFile(path.join(outside, 'secret.txt'), 'no\n');
  await symlink(outside, path.join(cwd, 'linked'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const values = (completion: { candidates: { value: string }[] }) => completion.candidates.map((candidate) => candidate.value);

describe('completeInput: / commands', () => {
  it('completes a command name at the start of the line, prefix matches first, with descriptions', async () => {
    const completion = await completeInput('/c', 2, { cwd, commands: COMMANDS });
    expect(completion.from).toBe(0);
    expect(completion.to).toBe(2);
    expect(values(completion)).toEqual(['/clear', '/compact', '/cost']);
    expect(completion.candidates[0].description).toBe('Clear the conversation');
    expect(values(await completeInput('/', 1, { cwd, commands: COMMANDS }))).toHaveLength(COMMANDS.length);
    // A namespaced custom command by its second part; a substring last.
    expect(values(await completeInput('/test', 5, { cwd, commands: COMMANDS }))).toEqual(['/frontend:test']);
    expect(values(await completeInput('/os', 3, { cwd, commands: COMMANDS }))).toEqual(['/cost']);
  });

  it('replaces the whole command word, and only at the start of the line', async () => {
    const completion = await completeInput('/comp now', 5, { cwd, commands: COMMANDS });
    expect([completion.from, completion.to]).toEqual([0, 5]);
    expect(values(completion)).toEqual(['/compact']);
    expect(values(await completeInput('say /c', 6, { cwd, commands: COMMANDS }))).toEqual([]);
    expect(values(await completeInput('/compact foo', 12, { cwd, commands: COMMANDS }))).toEqual([]);
  });
});

describe('completeInput: @ files', () => {
  it('lists the top level for a bare @, directories first, ignored files and .git left out', async () => {
    const completion = await completeInput('look at @', 9, { cwd, commands: [] });
    expect(completion.from).toBe(8);
    expect(values(completion)).toEqual(['@src/', '@.env.example', '@.gitignore', '@package.json', '@README.md']);
    expect(completion.candidates[0].description).toBe('directory');
  });

  it('matches a path prefix, a file name, or anywhere in the path, case aside; shallower paths first', async () => {
    expect(values(await completeInput('@src/c', 6, { cwd, commands: [] }))).toEqual([
      '@src/components/',
      '@src/components/button.test.tsx',
      '@src/components/Button.tsx',
    ]);
    expect(values(await completeInput('see @butt please', 9, { cwd, commands: [] }))).toEqual([
      '@src/components/button.test.tsx',
      '@src/components/Button.tsx',
    ]);
    expect(values(await completeInput('@index', 6, { cwd, commands: [] }))).toEqual(['@src/index.ts']);
    expect(values(await completeInput('@ponents/B', 10, { cwd, commands: [] }))).toEqual(['@src/components/button.test.tsx', '@src/components/Button.tsx']);
    const middle = await completeInput('x @rea y', 6, { cwd, commands: [] });
    expect([middle.from, middle.to]).toEqual([2, 6]);
    expect(values(middle)).toEqual(['@README.md']);
  });

  it('respects .gitignore (real ripgrep) and never offers anything outside the workspace', async () => {
    expect(values(await completeInput('@left', 5, { cwd, commands: [] }))).toEqual([]);
    expect(values(await completeInput('@debug', 6, { cwd, commands: [] }))).toEqual([]);
    expect(values(await completeInput('@../outside/', 12, { cwd, commands: [] }))).toEqual([]);
    expect(values(await completeInput('@/etc/pass', 10, { cwd, commands: [] }))).toEqual([]);
    expect(values(await completeInput('@~/', 3, { cwd, commands: [] }))).toEqual([]);
    // A link out of the workspace is not followed.
    expect(values(await completeInput('@secret', 7, { cwd, commands: [] }))).toEqual([]);
  });

  it('caps the candidates, sees new files once the short cache expires, and is empty for a missing directory', async () => {
    const many = path.join(root, 'many');
    await mkdir(many, { recursive: true });
    await Promise.all(Array.from({ length: 80 }, (_, index) => writeFile(path.join(many, `file${index}.txt`), '')));
    expect(values(await completeInput('@file', 5, { cwd: many, commands: [] }))).toHaveLength(MAX_CANDIDATES);
    await writeFile(path.join(cwd, 'NEWFILE.md'), '');
    await new Promise((resolve) => setTimeout(resolve, LISTING_TTL_MS + 100));
    expect(values(await completeInput('@NEWF', 5, { cwd, commands: [] }))).toEqual(['@NEWFILE.md']);
    expect(await completeInput('@x', 2, { cwd: path.join(root, 'missing'), commands: [] })).toEqual({ from: 2, to: 2, candidates: [] });
  });

  it('offers nothing for a plain word', async () => {
    expect(await completeInput('hello', 5, { cwd, commands: COMMANDS })).toEqual({ from: 5, to: 5, candidates: [] });
  });
});
