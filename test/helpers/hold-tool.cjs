/**
 * Loaded into a spawned worker process (`spawnWorkerProcess({ imports: [...] })`) to park it at an
 * exact point of a tool call, so a test's SIGKILL lands there: a crash at a chosen point rather
 * than wherever a timer happens to fall. It changes nothing else; the kill, the server and the
 * retry are real. DURABLE_AGENT_TEST_HOLD=`after-record:<Tool>` parks the worker right after the
 * journal's first entry for that tool's call lands, before the tool begins anything (issue 24's
 * "an append that never ran"); `after-start:<Tool>` right after the journal marked its effect
 * started, before the effect happens (a file not yet written). On parking it creates the file
 * DURABLE_AGENT_TEST_HOLD_MARKER, which the test waits for. Plain CommonJS: node loads it with
 * `--import` in every thread of the worker (the workflow threads inherit execArgv), before tsx.
 */
'use strict';
const fs = require('node:fs');
const { syncBuiltinESMExports } = require('node:module');

const hold = process.env.DURABLE_AGENT_TEST_HOLD;
const marker = process.env.DURABLE_AGENT_TEST_HOLD_MARKER;
if (hold !== undefined && marker !== undefined) {
  const [point, tool] = hold.split(':');
  const rename = fs.promises.rename;
  const park = () => {
    fs.writeFileSync(marker, String(process.pid));
    return new Promise(() => undefined);
  };
  const holdsHere = (from, to) => {
    if (!String(to).includes('/journal/')) return false;
    const entry = JSON.parse(fs.readFileSync(from, 'utf8'));
    if (entry.name !== tool) return false;
    return point === 'after-record' ? !fs.existsSync(to) : entry.status === 'started' && entry.effect !== undefined;
  };
  fs.promises.rename = async (from, to) => {
    const holds = holdsHere(from, to);
    await rename(from, to);
    if (holds) await park();
  };
  syncBuiltinESMExports();
}
