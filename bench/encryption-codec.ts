/**
 * What encrypted history costs: `npm run bench:encryption` (tsx bench/encryption-codec.ts [iterations]).
 * Encodes and decodes payloads shaped like the project's (JSON with source code and tool output, built
 * from this repository's own files; incompressible random data for contrast) through the real
 * EncryptionCodec and prints stored size and time per payload, median of the iterations.
 * Appends a section to bench/results/encryption-codec.md.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec, parseKeyRing } from '../infra/encryption-codec';

const ROOT = path.resolve(__dirname, '..');
const iterations = Number(process.argv[2] ?? 50);

/** Source text from the repository, repeated/cut to `bytes`. */
function sourceText(bytes: number): string {
  const files = ['workflows', 'activities', 'client']
    .flatMap((dir) =>
      readdirSync(path.join(ROOT, dir))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => path.join(ROOT, dir, name)),
    )
    .map((file) => readFileSync(file, 'utf8'));
  let text = files.join('\n');
  while (text.length < bytes) text += text;
  return text.slice(0, bytes);
}

/** A model-call-like payload: messages whose tool results hold source files. */
function transcriptPayload(bytes: number): Payload {
  const text = sourceText(bytes);
  const chunks = text.match(/[\s\S]{1,8000}/g) ?? [];
  const messages = chunks.flatMap((chunk, index) => [
    { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${index}`, name: 'Read', input: { file_path: `src/file${index}.ts` } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${index}`, content: chunk }] },
  ]);
  return defaultPayloadConverter.toPayload({ model: 'claude-sonnet-4-6', messages });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(name: string, payload: Payload, codec: EncryptionCodec) {
  const encodeMs: number[] = [];
  const decodeMs: number[] = [];
  let stored = 0;
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    const [encoded] = await codec.encode([payload]);
    const t1 = performance.now();
    await codec.decode([encoded]);
    const t2 = performance.now();
    encodeMs.push(t1 - t0);
    decodeMs.push(t2 - t1);
    stored = encoded.data!.length;
  }
  const original = payload.data!.length;
  return `| ${name} | ${original.toLocaleString('en')} | ${stored.toLocaleString('en')} | ${(stored / original).toFixed(3)} | ${median(encodeMs).toFixed(2)} | ${median(decodeMs).toFixed(2)} |`;
}

async function main() {
  const codec = new EncryptionCodec(parseKeyRing(`bench:${randomBytes(32).toString('base64')}`, 'bench'));
  const rows = [
    await measure(
      'small JSON (a signal: prompt + uuid)',
      defaultPayloadConverter.toPayload({ prompt: 'Fix the failing test in src/math.ts', uuid: 'a'.repeat(36) }),
      codec,
    ),
    await measure('transcript, 10 kB of source', transcriptPayload(10_000), codec),
    await measure('transcript, 100 kB of source', transcriptPayload(100_000), codec),
    await measure('transcript, 1 MB of source', transcriptPayload(1_000_000), codec),
    await measure('random bytes, 1 MB (binary/plain, incompressible)', defaultPayloadConverter.toPayload(randomBytes(1_000_000)), codec),
  ];
  const section = [
    `## ${new Date().toISOString().slice(0, 16)}Z — ${iterations} iterations, node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`,
    '',
    '| payload | JSON bytes | stored bytes | stored / JSON | encode ms (median) | decode ms (median) |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n');
  console.log(section);
  appendFileSync(path.join(ROOT, 'bench', 'results', 'encryption-codec.md'), `\n${section}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
