/**
 * The scripted model server in a process of its own (`--model-process`), so a benchmark's worker
 * does not share its event loop with the model's validation and SSE encoding. It answers the
 * read-files loop (`readFilesLoop` in support.ts): the prompt names the last file ("Read t0.txt to
 * t49.txt"), the request's tool results say how many are done. Prints `listening on <url>`.
 */
import { startScriptedModelServer } from '../testing/scripted-model-server';
import { readFilesResponder } from './read-files';

void startScriptedModelServer({ respond: readFilesResponder }).then((server) => {
  process.stdout.write(`listening on ${server.url}\n`);
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
});
