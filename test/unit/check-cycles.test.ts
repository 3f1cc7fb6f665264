/**
 * `npm run check:cycles` counts type-only imports (issue 20, item 5): madge runs with the
 * repository's .madgerc on files whose only links are `import type`, `import { type … }`,
 * `import type * as` and `import('…')` types, and must find the cycles.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
const madge = require('madge') as (paths: string | string[], config: object) => Promise<{ circular(): string[][] }>;

const root = path.resolve(__dirname, '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'check-cycles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('check:cycles', () => {
  it('finds cycles made only of type imports, with the repository config', async () => {
    const config = JSON.parse(readFileSync(path.join(root, '.madgerc'), 'utf8')) as { tsConfig: string };
    const files: Record<string, string> = {
      'a.ts': "import type { B } from './b';\nexport type A = { b?: B };\n",
      'b.ts': "import { type A } from './a';\nexport type B = { a?: A };\n",
      'c.ts': "export type C = { d?: import('./d').D };\n",
      'd.ts': "import type * as c from './c';\nexport type D = { c?: c.C };\n",
      'e.ts': "export type { F } from './f';\nexport type E = string;\n",
      'f.ts': "import type { E } from './e';\nexport type F = E;\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const result = await madge(dir, { ...config, tsConfig: path.join(root, config.tsConfig) });
    expect(
      result
        .circular()
        .map((cycle) => cycle.join(' > '))
        .sort(),
    ).toEqual(['a.ts > b.ts', 'c.ts > d.ts', 'e.ts > f.ts']);
  });

  it('is what the npm script runs', () => {
    const script = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['check:cycles'];
    // The options live in .madgerc, which madge reads from the repository root; flags would override it.
    expect(script).toMatch(/^madge --circular( [a-z]+)+$/);
  });
});
