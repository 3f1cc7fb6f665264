/** `durable-agent status [--json] <id>`: phase, turns, tools in flight, usage, context, last result, pending permissions. */
import { WORKSPACE_SEARCH_ATTRIBUTE } from '../../common/search-attributes';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { formatStatus } from '../format';
import { showInvisibleCharacters } from '../../common/visible-text';
import { resolveConversationId } from './list';
import { pendingPermissionLines } from './permissions';

export async function statusCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  return withConnection(async (api) => {
    const conversationId = await resolveConversationId(api, positionals[0]);
    const status = await api.status(conversationId);
    const pending = values.json ? [] : await pendingPermissionLines(api, status);
    // The workspace, from the conversation's search attributes (the status query does not carry it).
    const workspace = (await api.describe(conversationId).catch(() => undefined))?.typedSearchAttributes.get(WORKSPACE_SEARCH_ATTRIBUTE);
    // Model and workspace text (a running command's summary, the last answer) is shown, not obeyed: no escape or bidi control acts on the terminal.
    io.out(values.json ? JSON.stringify({ ...status, workspace }, null, 2) : showInvisibleCharacters([formatStatus(status, workspace), ...pending].join('\n')));
    return 0;
  });
}
