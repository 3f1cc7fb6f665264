/**
 * `node --experimental-websocket --import tsx scripts/terminal-screenshots.ts` — the chat screenshots of docs/ui.md (issue 32), taken
 * from a real chat in tmux: an in-memory dev server, a worker, the `npm start` demo's scripted
 * model, `durable-agent chat` in a 110×34 tmux window; `tmux capture-pane -e -p` → the ANSI text
 * as HTML (below) → a PNG from headless Chromium (infra/headless-chromium.ts). Writes
 * docs/images/chat-*.png, and docs/images/first-run.png of `npm start` on the same server. Run it again after changing
 * what chat or `npm start` shows.
 *
 * Needs tmux and Chromium (`apt-get install -y chromium`, or CHROMIUM_PATH); pngquant when installed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../infra/dev-server';
import { HeadlessPage } from '../infra/headless-chromium';
import type { Responder } from '../testing/scripted-model-server';
import { demoResponder } from './demo';
import { startScreenshotStack } from './screenshot-stack';

const OUT_DIR = path.join(REPO_ROOT, 'docs', 'images');
const TASK_QUEUE = 'durable-agent-screenshots';
const COLUMNS = 110;
const ROWS = 34;
const FIRST_PROMPT = 'The test in test.js fails. Find the bug in math.js, fix it, and run `node test.js` to verify.';
const SECOND_PROMPT = 'Explain the fix in a few lines.';
const EXPLANATION = [
  '## The bug',
  '',
  '`sum` started its loop at **index 1**, so the first number was never added:',
  '',
  '```js',
  'for (let i = 0; i < numbers.length; i++) total += numbers[i];',
  '```',
  '',
  '- `sum([1, 2, 3])` is now **6** (it was 5)',
  '- `average([])` still returns 0 before it calls `sum`',
].join('\n');

const responder: Responder = (request) => {
  if (JSON.stringify(request.body.messages.at(-1)?.content).includes(SECOND_PROMPT)) {
    return { deltaDelayMs: 15, chunkSize: 6, content: [{ type: 'text', text: EXPLANATION }] };
  }
  return demoResponder(request);
};

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(session: string, test: (text: string) => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (test(tmux('capture-pane', '-p', '-t', session))) return;
    await sleep(200);
  }
  throw new Error(`timed out; the screen:\n${tmux('capture-pane', '-p', '-t', session)}`);
}

// ---- ANSI (SGR) to HTML ----
const BASE16 = ['#2e3436', '#cc0000', '#4e9a06', '#c4a000', '#3465a4', '#75507b', '#06989a', '#d3d7cf'];
const BRIGHT16 = ['#555753', '#ef2929', '#8ae234', '#fce94f', '#729fcf', '#ad7fa8', '#34e2e2', '#eeeeec'];

function color256(n: number): string {
  if (n < 8) return BASE16[n];
  if (n < 16) return BRIGHT16[n - 8];
  if (n >= 232) {
    const level = 8 + (n - 232) * 10;
    return `rgb(${level},${level},${level})`;
  }
  const index = n - 16;
  const steps = [0, 95, 135, 175, 215, 255];
  return `rgb(${steps[Math.floor(index / 36)]},${steps[Math.floor(index / 6) % 6]},${steps[index % 6]})`;
}

interface Style {
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
  fg?: string;
  bg?: string;
}

function applySgr(style: Style, params: number[]): Style {
  const next = { ...style };
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (p === 0) Object.keys(next).forEach((key) => delete next[key as keyof Style]);
    else if (p === 1) next.bold = true;
    else if (p === 2) next.dim = true;
    else if (p === 3) next.italic = true;
    else if (p === 4) next.underline = true;
    else if (p === 7) next.inverse = true;
    else if (p === 22) next.bold = next.dim = false;
    else if (p === 23) next.italic = false;
    else if (p === 24) next.underline = false;
    else if (p === 27) next.inverse = false;
    else if (p >= 30 && p <= 37) next.fg = BASE16[p - 30];
    else if (p === 39) delete next.fg;
    else if (p >= 40 && p <= 47) next.bg = BASE16[p - 40];
    else if (p === 49) delete next.bg;
    else if (p >= 90 && p <= 97) next.fg = BRIGHT16[p - 90];
    else if (p >= 100 && p <= 107) next.bg = BRIGHT16[p - 100];
    else if ((p === 38 || p === 48) && params[i + 1] === 5) {
      next[p === 38 ? 'fg' : 'bg'] = color256(params[i + 2]);
      i += 2;
    } else if ((p === 38 || p === 48) && params[i + 1] === 2) {
      next[p === 38 ? 'fg' : 'bg'] = `rgb(${params[i + 2]},${params[i + 3]},${params[i + 4]})`;
      i += 4;
    }
  }
  return next;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function ansiToHtml(ansi: string): string {
  let style: Style = {};
  let html = '';
  for (const part of ansi.split(/(\u001b\[[0-9;:]*m)/)) {
    const sgr = /^\u001b\[([0-9;:]*)m$/.exec(part);
    if (sgr) {
      style = applySgr(style, sgr[1] === '' ? [0] : sgr[1].split(/[;:]/).map(Number));
      continue;
    }
    const text = part.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
    if (text === '') continue;
    const fg = style.inverse ? (style.bg ?? '#1e1e1e') : style.fg;
    const bg = style.inverse ? (style.fg ?? '#d3d7cf') : style.bg;
    const css = [
      fg && `color:${fg}`,
      bg && `background:${bg}`,
      style.bold && 'font-weight:bold',
      style.dim && 'opacity:0.6',
      style.italic && 'font-style:italic',
      style.underline && 'text-decoration:underline',
    ].filter(Boolean);
    html += css.length > 0 ? `<span style="${css.join(';')}">${escapeHtml(text)}</span>` : escapeHtml(text);
  }
  return html;
}

function page(ansi: string): string {
  return `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#1e1e1e}
.term{display:inline-block;margin:16px;padding:14px 18px;background:#1e1e1e;color:#d3d7cf;border-radius:8px;box-shadow:0 0 0 1px #444;
font:14px/1.2 "DejaVu Sans Mono","DejaVu Math TeX Gyre","Liberation Mono",monospace;white-space:pre}
</style><div class="term">${ansiToHtml(ansi.replace(/\s+$/, ''))}</div>`;
}

async function main(): Promise<void> {
  const stack = await startScreenshotStack({ name: 'chat', taskQueue: TASK_QUEUE, responder, headless: true, log: () => {} });
  const { server, worker, workspace } = stack;
  const session = `chat-screenshots-${process.pid}`;
  let browser: HeadlessPage | undefined;
  try {
    await worker.runUntil(async () => {
      const command = [
        `TEMPORAL_ADDRESS=${server.address}`,
        `DURABLE_AGENT_TASK_QUEUE=${TASK_QUEUE}`,
        process.execPath,
        path.join(REPO_ROOT, 'bin', 'durable-agent.js'),
        'chat',
        '--cwd',
        workspace,
        '--permission-mode',
        'default',
        '--model',
        'claude-sonnet-4-6',
      ].join(' ');
      tmux('new-session', '-d', '-s', session, '-x', String(COLUMNS), '-y', String(ROWS), command);
      browser = await HeadlessPage.launch({ width: 1100, height: 800 });
      await mkdir(OUT_DIR, { recursive: true });
      const shoot = async (name: string) => {
        await sleep(400);
        const html = path.join(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-shot-')), 'shot.html');
        await writeFile(html, page(tmux('capture-pane', '-e', '-p', '-t', session)));
        await browser!.navigate(`file://${html}`);
        const file = path.join(OUT_DIR, name);
        // Right after a navigation Chromium may not have laid the page out yet ("Cannot take screenshot with 0 width").
        let png: Buffer | undefined;
        for (let attempt = 1; !png; attempt++) {
          png = await browser!.screenshot({ fullPage: true }).catch(async (error: unknown) => {
            if (attempt >= 5) throw error;
            await sleep(300);
            return undefined;
          });
        }
        await writeFile(file, png);
        await promisify(execFile)('pngquant', ['--quality=60-90', '--strip', '--force', '--output', file, file]).catch(() =>
          console.log('(pngquant not found: PNG left uncompressed)'),
        );
        console.log(`docs/images/${name}: ${Math.round((await stat(file)).size / 1024)} kB`);
      };
      await until(session, (text) => /Ctrl-D leaves[^\n]*\n> *$/.test(`${text.trimEnd()} `), 90_000);
      tmux('send-keys', '-t', session, '-l', FIRST_PROMPT);
      tmux('send-keys', '-t', session, 'Enter');
      // The Edit asks: the menu, with its diff above.
      await until(session, (text) => text.includes('Do you want to proceed?'));
      await shoot('chat-permission.png');
      for (let asked = 0; asked < 4; asked++) {
        tmux('send-keys', '-t', session, '1');
        await sleep(1500);
        const text = tmux('capture-pane', '-p', '-t', session);
        if (/\$\d+\.\d{4}\]\s*\n> *$/.test(`${text.trimEnd()} `)) break;
        if (!text.includes('Do you want to proceed?'))
          await until(session, (now) => now.includes('Do you want to proceed?') || /\$\d+\.\d{4}\]\s*\n> *$/.test(`${now.trimEnd()} `));
      }
      await until(session, (text) => /\$\d+\.\d{4}\]\s*\n> *$/.test(`${text.trimEnd()} `));
      tmux('send-keys', '-t', session, '-l', SECOND_PROMPT);
      tmux('send-keys', '-t', session, 'Enter');
      await until(session, (text) => text.includes('average([])') && /\$\d+\.\d{4}\]\s*\n> *$/.test(`${text.trimEnd()} `));
      await shoot('chat-session.png');
      // A three-line paste waits on the prompt line as one placeholder.
      tmux('set-buffer', '-b', session, 'Also check these:\n- median()\n- mode()');
      tmux('paste-buffer', '-p', '-b', session, '-t', session);
      await until(session, (text) => text.includes('[Pasted text +2 lines]'));
      await shoot('chat-paste.png');
      tmux('kill-session', '-t', session);
      // The first run: `npm start` on this server (its own worker and the scripted demo model), from its first line to its exit.
      tmux(
        'new-session',
        '-d',
        '-s',
        session,
        '-x',
        String(COLUMNS),
        '-y',
        '44',
        `cd ${REPO_ROOT} && env -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL TEMPORAL_ADDRESS=${server.address} npm start; sleep 600`,
      );
      await until(session, (text) => /npm run cli -- chat/.test(text), 180_000);
      await shoot('first-run.png');
    });
  } finally {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      /* gone */
    }
    await browser?.close();
    await stack.close();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
