/** `durable-agent server`: a local Temporal dev server for people (persistent, UI on :8233), until stopped. */
import { parse } from '../command-line';

export async function serverCommand(args: string[]): Promise<number> {
  parse(args, {}, 0, 'server');
  const { runServerForPeople } = await import('../../infra/dev-server');
  await runServerForPeople();
  return 0;
}
