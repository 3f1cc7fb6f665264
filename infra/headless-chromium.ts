/**
 * Headless Chromium driven over the DevTools protocol (its websocket), for screenshots of the
 * Temporal UI (scripts/ui-screenshots.ts). Not `chromium --screenshot`: the UI keeps polling,
 * so "page loaded" never comes; here the caller waits for the text it needs, then shoots.
 *
 * Needs Chromium (Debian: `apt-get install -y chromium`; or CHROMIUM_PATH) and a global
 * WebSocket (Node 22+, or Node 20 with `--experimental-websocket`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The Chromium binary: CHROMIUM_PATH, or a usual install location. */
export function findChromium(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  const found = CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`No Chromium found (tried ${CANDIDATES.join(', ')}). Install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH.`);
  return found;
}

interface Pending {
  resolve(value: any): void;
  reject(error: Error): void;
}

/** One page of a headless Chromium. */
export class HeadlessPage {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private constructor(
    private readonly socket: WebSocket,
    private readonly browser: ChildProcess,
    private readonly profile: string,
  ) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  /** Starts Chromium with one page of `width`×`height` CSS pixels. */
  static async launch(options: { width: number; height: number; chromiumPath?: string }): Promise<HeadlessPage> {
    if (typeof WebSocket === 'undefined') throw new Error('No global WebSocket: use Node 22+, or run Node 20 with --experimental-websocket.');
    const profile = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chromium-'));
    const browser = spawn(
      options.chromiumPath ?? findChromium(),
      [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--hide-scrollbars',
        '--no-first-run',
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        `--window-size=${options.width},${options.height}`,
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const browserUrl = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`Chromium did not start:\n${output}`)), 60_000);
      browser.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      browser.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code}):\n${output}`));
      });
    });
    // The page target of `about:blank`, from the DevTools HTTP endpoint next to the browser's socket.
    const { host } = new URL(browserUrl);
    const targets = (await (await fetch(`http://${host}/json/list`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const target = targets.find((candidate) => candidate.type === 'page');
    if (!target) throw new Error('Chromium opened no page');
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error('Could not connect to Chromium')), { once: true });
    });
    const page = new HeadlessPage(socket, browser, profile);
    await page.send('Page.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width: options.width, height: options.height, deviceScaleFactor: 1, mobile: false });
    return page;
  }

  /** One DevTools protocol command. */
  send<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The value of a JavaScript expression in the page. */
  async evaluate<T>(expression: string): Promise<T> {
    const { result, exceptionDetails } = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (exceptionDetails) throw new Error(`In the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value as T;
  }

  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** Waits until the page's text contains every one of `texts` (the UI renders after its own requests). */
  async waitForText(texts: string[], timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const body = await this.evaluate<string>('document.body ? document.body.innerText : ""').catch(() => '');
      const missing = texts.filter((text) => !body.includes(text));
      if (missing.length === 0) return;
      if (Date.now() > deadline)
        throw new Error(`The page never showed ${missing.map((text) => JSON.stringify(text)).join(', ')}. It shows:\n${body.slice(0, 6000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Clicks the first button, link or tab whose text is `text` (or starts with it, before a count badge). */
  async clickText(text: string, selector = 'button, a, [role="tab"], [role="button"], [role="menuitem"], li'): Promise<void> {
    const clicked = await this.evaluate<boolean>(`(() => {
      const wanted = ${JSON.stringify(text)};
      const matches = (candidate) => {
        const shown = (candidate.innerText || '').trim();
        return shown === wanted || shown.startsWith(wanted + '\\n') || shown.startsWith(wanted + ' ');
      };
      const element = [...document.querySelectorAll(${JSON.stringify(selector)})].find(matches);
      if (!element) return false;
      element.scrollIntoView({ block: 'center' });
      element.click();
      return true;
    })()`);
    if (!clicked) throw new Error(`Nothing to click with the text ${JSON.stringify(text)}`);
  }

  /** Changes the page's size (CSS pixels): the UI lays the timeline out in the viewport's height. */
  async resize(width: number, height: number): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  /** The page y (CSS pixels) of the first element whose own text is `text`: where a screenshot can start. */
  async topOf(text: string): Promise<number> {
    const top = await this.evaluate<number | null>(`(() => {
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.textContent.trim() === ${JSON.stringify(text)}) return node.parentElement.getBoundingClientRect().top + window.scrollY;
      }
      return null;
    })()`);
    if (top === null) throw new Error(`No element shows the text ${JSON.stringify(text)}`);
    return top;
  }

  /** A PNG of the viewport (or of the whole page's height from `top`, up to `maxHeight`). */
  async screenshot(options: { fullPage?: boolean; maxHeight?: number; top?: number } = {}): Promise<Buffer> {
    let clip: Record<string, number> | undefined;
    if (options.fullPage) {
      const { contentSize } = await this.send('Page.getLayoutMetrics');
      const top = Math.max(0, Math.min(options.top ?? 0, contentSize.height - 1));
      clip = { x: 0, y: top, width: contentSize.width, height: Math.min(contentSize.height - top, options.maxHeight ?? 4000), scale: 1 };
    }
    const { data } = await this.send<{ data: string }>('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: Boolean(clip),
      ...(clip ? { clip } : {}),
    });
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    this.socket.close();
    if (this.browser.exitCode === null) {
      const exited = new Promise((resolve) => this.browser.once('exit', resolve));
      this.browser.kill('SIGTERM');
      await exited;
    }
    await rm(this.profile, { recursive: true, force: true });
  }
}
