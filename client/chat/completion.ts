/** PLACEHOLDER (helper "chat"'s branch only): helper "render" writes the real module; on merge, take theirs. */
export async function completeInput(
  line: string,
  cursor: number,
  ctx: { cwd: string; commands: { name: string; description: string }[] },
): Promise<{ from: number; to: number; candidates: { value: string; description?: string }[] }> {
  const word = /\/[\w-]*$/.exec(line.slice(0, cursor));
  if (!word || word.index !== 0) return { from: cursor, to: cursor, candidates: [] };
  const candidates = ctx.commands
    .filter((command) => `/${command.name}`.startsWith(word[0]))
    .map((command) => ({ value: `/${command.name}`, description: command.description }));
  return { from: 0, to: cursor, candidates };
}
