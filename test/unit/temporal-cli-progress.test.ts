/**
 * The Temporal CLI's first build narrates (issue 32, item 4): go's progress counted, the elapsed
 * time every tick (a line when not on a terminal), anything else go says passed on. Run against a
 * real process that prints what `go install -v` prints.
 */
import { describe, expect, it } from 'vitest';
import { countGoProgress, describeProgress, displayPath, formatElapsed, runStreaming } from '../../infra/temporal-cli';
import os from 'node:os';
import path from 'node:path';

describe("the Temporal CLI build's progress", () => {
  it("counts go's downloads and built packages, and nothing else", () => {
    const progress = { downloaded: 0, built: 0 };
    expect(countGoProgress('go: downloading github.com/temporalio/cli v1.5.1', progress)).toBe(true);
    expect(countGoProgress('go.temporal.io/server/service/history', progress)).toBe(true);
    expect(countGoProgress('golang.org/x/sys/unix', progress)).toBe(true);
    expect(countGoProgress('# github.com/foo/bar', progress)).toBe(false);
    expect(countGoProgress('go: github.com/x@v1: reading https://proxy.golang.org/…: 404 Not Found', progress)).toBe(false);
    expect(countGoProgress('main.go:3:2: undefined: x', progress)).toBe(false);
    expect(progress).toEqual({ downloaded: 1, built: 2, latest: 'golang.org/x/sys/unix' });
    expect(describeProgress(progress)).toBe('1 module downloaded, 2 packages built');
    expect(describeProgress({ downloaded: 0, built: 0 })).toBe('starting');
    expect(formatElapsed(9_400)).toBe('9 s');
    expect(formatElapsed(151_000)).toBe('2 min 31 s');
    expect(displayPath(path.join(os.homedir(), '.cache', 'x'))).toBe(path.join('~', '.cache', 'x'));
  });

  it('says how long it has been building at every tick, and passes on what is not progress', async () => {
    const lines: string[] = [];
    const script = [
      'echo "go: downloading github.com/temporalio/cli v1.5.1" >&2',
      'sleep 0.4',
      'echo github.com/temporalio/cli/temporalcli',
      'echo "note: something a person should read" >&2',
      'sleep 0.4',
    ].join('; ');
    const progress = await runStreaming('sh', ['-c', script], process.env, (line) => lines.push(line), undefined, { tickMs: 150 });
    expect(progress).toMatchObject({ downloaded: 1, built: 1 });
    expect(lines).toContain('  note: something a person should read');
    expect(lines.some((line) => line.includes('go: downloading'))).toBe(false);
    const ticks = lines.filter((line) => /^ {2}… building, \d+ s so far: /.test(line));
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks.at(-1)).toMatch(/1 module downloaded, 1 package built · github.com\/temporalio\/cli\/temporalcli$/);
  });

  it('fails with the last lines go said', async () => {
    await expect(runStreaming('sh', ['-c', 'echo "go: cannot find module" >&2; exit 1'], process.env, () => {})).rejects.toThrow(
      /exited with 1\. Last output:\ngo: cannot find module/,
    );
  });
});
