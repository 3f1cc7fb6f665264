/** PLACEHOLDER (helper "chat"'s branch only): helper "render" writes the real module; on merge, take theirs. */
export function renderToolDiff(toolName: string, input: unknown, width: number): string | undefined {
  void toolName;
  void input;
  void width;
  return undefined;
}
