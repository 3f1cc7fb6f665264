/**
 * Every command the README tells a newcomer to run exists in the installed CLI with the flags the
 * README gives it (issue 19: "the README's commands run through the installed binary"). Each is
 * run with a dead server: a known command with known flags gets as far as connecting, or its own
 * usage check — never "Unknown command" or "Unknown option".
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin';

const README = readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');

/** `npm run cli -- <args>` lines of the README's code blocks, arguments split as a shell would (roughly). */
function readmeCommands(): string[][] {
  const commands: string[][] = [];
  for (const block of README.match(/```bash\n[\s\S]*?```/g) ?? []) {
    for (const line of block.split('\n')) {
      const match = /npm run cli -- (.*?)(?:\s+#.*)?$/.exec(line);
      if (!match) continue;
      const words = (match[1].match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((word) => word.replace(/^["']|["']$/g, ''));
      commands.push(words.map((word) => (word.startsWith('<') || word.startsWith('[') ? 'x' : word.replace(/^~/, '/tmp'))));
    }
  }
  return commands;
}

describe("the README's commands", () => {
  it('are commands and flags the installed binary knows', () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThan(10);
    for (const words of commands) {
      const { err } = runBin(words, { DURABLE_AGENT_REMOTE_CWD: '1' });
      expect(err, words.join(' ')).not.toMatch(/Unknown command|Unknown option|Cannot find module/);
    }
  }, 120_000);
});
