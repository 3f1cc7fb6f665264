/**
 * Benchmark: what a long task costs in input tokens, with prompt caching and without (issue 18).
 *
 *   npm run bench:cost [-- [N ...] [--note TEXT]]     (or: npx tsx bench/cost.ts 40 100)
 *
 * For each N (default 40 and 100): one one-shot conversation on the default model whose query
 * makes N steps, each a `Read` of a distinct 4 KB file (random hex), then a text answer. The
 * scripted model server bills prompt caching as the API does (testing/prompt-cache.ts: the longest
 * cached prefix at or up to 20 blocks before a breakpoint; writes 1.25×, reads 0.1×; nothing under
 * 1024 tokens cached; token counts are its chars/4 estimate), and the conversation's result
 * reports what the engine was billed.
 *
 * The same recorded requests are then billed again, in order, on a fresh cache with their
 * breakpoints changed — the answers do not depend on cache_control, so the conversation would
 * have been the same:
 *  - "as sent": the requests as the engine sent them (breakpoints on the system prompt and on the
 *    last message): must equal what the result reports;
 *  - "system only": breakpoints on the system prompt only (the engine before issue 18);
 *  - "off": no breakpoint at all.
 * Input-equivalent tokens = input + 1.25 × cache writes + 0.1 × cache reads; dollars at the
 * model's list prices (common/cost.ts), output included. Claude Code 2.1.197 on the same task
 * (docs/design/claude-code-observed.md, issue 18): 243k input-equivalent tokens at 40 steps,
 * 0.93M at 100. Appended to bench/results/cost.md.
 */
import { randomBytes } from 'node:crypto';
import { costOfUsage } from '../common/cost';
import type { Usage } from '../common/messages';
import { DEFAULT_MODEL } from '../common/models';
import { type CacheUsage, PromptCache, inputEquivalentTokens, withoutCacheControl } from '../testing/prompt-cache';
import { type RecordedRequest, estimateInputTokens } from '../testing/scripted-model-server';
import { readFilesPrompt, readFilesResponder } from './read-files';
import { benchArgs, markdownTable, progress, publishResults, runBench, runContext, runOneShotQuery, withBenchStack } from './support';
import { formatUsd } from '../common/money';

const FILE_BYTES = 4096;
const LINE_BYTES = 64;
/** Claude Code 2.1.197, measured on the same task (input-equivalent tokens per task). */
const CLAUDE_CODE: Record<number, number> = { 40: 243_000, 100: 930_000 };

const fileName = (index: number) => `c${index}.txt`;

function fileContent(): string {
  const lines: string[] = [];
  for (let line = 0; line < FILE_BYTES / LINE_BYTES; line++)
    lines.push(
      randomBytes(LINE_BYTES / 2)
        .toString('hex')
        .slice(0, LINE_BYTES - 1),
    );
  return `${lines.join('\n')}\n`;
}

type Mode = 'as sent' | 'system only' | 'off';

/** The request body with its breakpoints as `mode` says. */
function withBreakpoints(body: Record<string, unknown>, mode: Mode): Record<string, unknown> {
  if (mode === 'as sent') return body;
  if (mode === 'off') return withoutCacheControl(body);
  return { ...body, messages: withoutCacheControl(body.messages) };
}

/** Sums of the usage the requests would be billed, in order, on a fresh cache. */
function rebill(requests: RecordedRequest[], mode: Mode): CacheUsage & { requests: number } {
  const cache = new PromptCache(() => 0);
  const total = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, requests: 0 };
  for (const request of requests) {
    const usage = cache.bill(withBreakpoints(request.body, mode), estimateInputTokens(request.body));
    total.input_tokens += usage.input_tokens;
    total.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    total.cache_read_input_tokens += usage.cache_read_input_tokens;
    total.requests++;
  }
  return total;
}

const thousands = (tokens: number) => (tokens >= 1_000_000 ? `${(tokens / 1_000_000).toFixed(2)}M` : `${Math.round(tokens / 1000)}k`);

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const sizes = (positionals.length ? positionals : ['40', '100']).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`step counts must be positive integers: ${positionals.join(' ')}`);
  const context = runContext();
  const files: Record<string, string> = {};
  for (let index = 0; index < Math.max(...sizes); index++) files[fileName(index)] = fileContent();

  const rows: Array<Array<string | number>> = [];
  const checks: string[] = [];
  for (const steps of sizes) {
    await withBenchStack({ respond: readFilesResponder, files }, async (stack) => {
      progress(`${steps} steps on ${DEFAULT_MODEL}…`);
      const query = await runOneShotQuery(stack, readFilesPrompt(fileName, steps), { maxTurns: steps + 10 });
      const requests = stack.model!.requests.filter((request) => request.path === '/v1/messages');
      const result = query.result;
      const reported = result.usage;
      const outputTokens = reported.output_tokens;
      for (const mode of ['as sent', 'system only', 'off'] as const) {
        const billed = rebill(requests, mode);
        const equivalent = inputEquivalentTokens(billed);
        const usage: Usage = { ...billed, output_tokens: outputTokens };
        rows.push([
          steps,
          mode,
          billed.requests,
          thousands(billed.input_tokens),
          thousands(billed.cache_creation_input_tokens),
          thousands(billed.cache_read_input_tokens),
          `**${thousands(equivalent)}**`,
          formatUsd(costOfUsage(DEFAULT_MODEL, usage), 2),
          CLAUDE_CODE[steps] ? `${(equivalent / CLAUDE_CODE[steps]).toFixed(2)}×` : '–',
        ]);
      }
      const asSent = rebill(requests, 'as sent');
      checks.push(
        `- ${steps} steps: ${result.subtype}, ${result.num_turns} turns; the result reports input ${reported.input_tokens}, cache writes ${reported.cache_creation_input_tokens}, ` +
          `reads ${reported.cache_read_input_tokens} (re-billed "as sent": ${asSent.input_tokens}, ${asSent.cache_creation_input_tokens}, ${asSent.cache_read_input_tokens}), ` +
          `total_cost_usd ${formatUsd(result.total_cost_usd, 2)}; the model server refused ${stack.model!.rejections.length} requests.`,
      );
    });
  }
  const body = [
    markdownTable(
      ['steps', 'breakpoints', 'requests', 'input', 'cache writes', 'cache reads', 'input-equivalent', 'dollars (in + out)', '÷ Claude Code'],
      rows,
    ),
    '',
    `Model ${DEFAULT_MODEL} (the default). Input-equivalent = input + 1.25 × writes + 0.1 × reads, in the scripted server's chars/4 tokens. ` +
      `"as sent" is the engine now (breakpoints on the system prompt and on the last message); "system only" the engine before issue 18; "off" no caching. ` +
      `Claude Code 2.1.197 on the same task: ${thousands(CLAUDE_CODE[40])} (40 steps), ${thousands(CLAUDE_CODE[100])} (100 steps).`,
    '',
    ...checks,
  ];
  await publishResults('cost', { title: `input cost of a ${sizes.join(' and ')}-step task, prompt caching on and off`, context, note, body });
}

runBench(main);
