/**
 * The workflow's SHA-256 (common/digest.ts, @noble/hashes since issue 23) against node:crypto on
 * the same text: MB/s over transcript-sized JSON (median of N runs). The hand-written one it
 * replaced measured 33 MB/s on this machine (issue 23).
 *
 *   npx tsx bench/digest.ts [runs]
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256Hex } from '../common/digest';

const runs = Number(process.argv[2] ?? 9);
const text = JSON.stringify(Array.from({ length: 4000 }, (_, index) => ({ role: 'user', content: `message ${index} ${'lorem ipsum é✓ '.repeat(60)}` })));
const megabytes = Buffer.byteLength(text) / 1024 / 1024;

function rate(digest: () => string): number {
  const rates: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    digest();
    rates.push(megabytes / ((performance.now() - started) / 1000));
  }
  return rates.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const noble = rate(() => sha256Hex(text));
const native = rate(() => createHash('sha256').update(text, 'utf8').digest('hex'));
const line = `| ${new Date().toISOString()} | ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'} | ${megabytes.toFixed(1)} MB | ${noble.toFixed(0)} MB/s | ${native.toFixed(0)} MB/s | \`npx tsx bench/digest.ts ${runs}\` |`;
console.log(line);
appendFileSync(path.join(__dirname, 'results', 'digest.md'), `${line}\n`);
