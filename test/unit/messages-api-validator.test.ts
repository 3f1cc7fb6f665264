/**
 * The Messages API validator: for each rule one request it accepts and one it refuses with the
 * API's message, plus a realistic multi-turn agent request that must pass untouched.
 */
import { describe, expect, it } from 'vitest';
import { validateMessagesRequest } from '../../testing/messages-api-validator';

type Body = Record<string, any>;

const READ = { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } };
const BASH = { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } };

/** A minimal valid /v1/messages body, with overrides. */
function request(overrides: Body = {}): Body {
  return { model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], ...overrides };
}

/** A valid body whose history has one tool round, with the given messages appended. */
function toolRound(...more: Body[]): Body {
  return request({
    tools: [READ, BASH],
    messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.js' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file text' }] },
      ...more,
    ],
  });
}

const ok = (body: unknown, kind: 'messages' | 'count_tokens' = 'messages') => expect(validateMessagesRequest(body, kind)).toBeUndefined();
const refused = (body: unknown, message: string | RegExp, kind: 'messages' | 'count_tokens' = 'messages') => {
  const result = validateMessagesRequest(body, kind);
  if (typeof message === 'string') expect(result).toBe(message);
  else expect(result).toMatch(message);
};

describe('messages API validator: top-level fields', () => {
  it('wants a JSON object body', () => {
    ok(request());
    refused([], 'Request body must be a JSON object');
    refused(null, 'Request body must be a JSON object');
    refused('{"model":"x"}', 'Request body must be a JSON object');
  });

  it('refuses unknown top-level fields, per endpoint', () => {
    ok(request({ stream: true, metadata: { user_id: 'u' }, temperature: 0.5 }));
    refused(request({ response_format: { type: 'json' } }), 'response_format: Extra inputs are not permitted');
    const { max_tokens: _maxTokens, ...countable } = request();
    ok(countable, 'count_tokens');
    refused(request(), 'max_tokens: Extra inputs are not permitted', 'count_tokens');
    refused({ ...countable, stream: true }, 'stream: Extra inputs are not permitted', 'count_tokens');
  });

  it('wants a non-empty model string', () => {
    ok(request({ model: 'claude-sonnet-4-6' }));
    refused({ max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, 'model: Field required');
    refused(request({ model: '' }), 'model: String should have at least 1 character');
    refused(request({ model: 42 }), 'model: Input should be a valid string');
  });

  it('wants max_tokens, an integer of at least 1, on /v1/messages only', () => {
    ok(request({ max_tokens: 1 }));
    const { max_tokens: _maxTokens, ...withoutMax } = request();
    refused(withoutMax, 'max_tokens: Field required');
    refused(request({ max_tokens: 0 }), 'max_tokens: Input should be greater than or equal to 1');
    refused(request({ max_tokens: 1.5 }), 'max_tokens: Input should be a valid integer');
    refused(request({ max_tokens: '1024' }), 'max_tokens: Input should be a valid integer');
    ok(withoutMax, 'count_tokens');
  });

  it('wants stream to be a boolean', () => {
    ok(request({ stream: false }));
    refused(request({ stream: 'yes' }), 'stream: Input should be a valid boolean');
  });
});

describe('messages API validator: messages list and roles', () => {
  it('wants a non-empty messages list', () => {
    ok(request());
    refused({ model: 'm', max_tokens: 1 }, 'messages: Field required');
    refused(request({ messages: {} }), 'messages: Input should be a valid list');
    refused(request({ messages: [] }), 'messages: at least one message is required');
  });

  it('accepts only the user and assistant roles (role "system" depends on the model: refused)', () => {
    ok(
      request({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
      }),
    );
    refused(
      request({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'be brief' },
        ],
      }),
      "role 'system' is not supported on this model",
    );
    refused(request({ messages: [{ role: 'tool', content: 'x' }] }), "messages.0.role: Input should be 'user' or 'assistant'");
    refused(request({ messages: [{ content: 'x' }] }), 'messages.0.role: Field required');
    refused(request({ messages: [{ role: 'user' }] }), 'messages.0.content: Field required');
    refused(request({ messages: [{ role: 'user', content: 'x', name: 'bob' }] }), 'messages.0.name: Extra inputs are not permitted');
  });

  it('wants the first message to be a user message', () => {
    ok(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Hello' },
        ],
      }),
    );
    refused(
      request({
        messages: [
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: 'hi' },
        ],
      }),
      'messages: first message must use the "user" role',
    );
  });

  it('combines consecutive messages of one role into one turn (accepted)', () => {
    ok(
      request({
        messages: [
          { role: 'user', content: 'one' },
          { role: 'user', content: 'two' },
          { role: 'assistant', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'three' },
        ],
      }),
    );
    // tool results split over two consecutive user messages still answer the turn before them
    ok(
      request({
        tools: [READ],
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_a', name: 'Read', input: {} },
              { type: 'tool_use', id: 'toolu_b', name: 'Read', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' }] },
        ],
      }),
    );
  });

  it('wants non-empty content in every message but an optional final assistant message', () => {
    ok(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '' },
        ],
      }),
    );
    ok(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [] },
        ],
      }),
    );
    refused(
      request({ messages: [{ role: 'user', content: '' }] }),
      'messages.0: all messages must have non-empty content except for the optional final assistant message',
    );
    refused(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [] },
          { role: 'user', content: 'again' },
        ],
      }),
      'messages.1: all messages must have non-empty content except for the optional final assistant message',
    );
  });

  it('refuses trailing whitespace at the end of a final assistant (prefill) message', () => {
    ok(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'The answer is' },
        ],
      }),
    );
    ok(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Done.\n' },
          { role: 'user', content: 'ok' },
        ],
      }),
    );
    refused(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'The answer is ' },
        ],
      }),
      'messages: final assistant content cannot end with trailing whitespace',
    );
  });
});

describe('messages API validator: text blocks', () => {
  it('wants non-empty, non-blank text in user and assistant messages', () => {
    ok(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] }));
    refused(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello' },
              { type: 'text', text: '' },
            ],
          },
        ],
      }),
      'messages: text content blocks must be non-empty',
    );
    refused(request({ messages: [{ role: 'user', content: '  \n' }] }), 'messages: text content blocks must contain non-whitespace text');
    refused(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'text', text: '\n\n' }] },
          { role: 'user', content: 'and?' },
        ],
      }),
      'messages: text content blocks must contain non-whitespace text',
    );
  });

  it('refuses cache_control on an empty text block, with its path', () => {
    ok(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] }));
    refused(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'text', text: '', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
      }),
      'messages.0.content.1.text: cache_control cannot be set for empty text blocks',
    );
  });

  it('applies to tool_result content too (string or text blocks)', () => {
    ok(toolRound());
    const withResult = (content: unknown) =>
      request({
        tools: [READ],
        messages: [
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
        ],
      });
    ok(withResult([{ type: 'text', text: 'line 1' }]));
    ok(withResult(undefined));
    refused(withResult(''), 'messages: text content blocks must be non-empty');
    refused(withResult(' '), 'messages: text content blocks must contain non-whitespace text');
    refused(
      withResult([
        { type: 'text', text: 'a' },
        { type: 'text', text: '' },
      ]),
      'messages: text content blocks must be non-empty',
    );
    refused(withResult([{ type: 'tool_use', id: 'x', name: 'y', input: {} }]), /^messages\.2\.content\.0\.tool_result\.content\.0: Input tag 'tool_use'/);
  });
});

describe('messages API validator: system prompt', () => {
  it('accepts a string or a list of non-empty text blocks', () => {
    ok(request({ system: 'You are terse.' }));
    ok(
      request({
        system: [
          { type: 'text', text: 'Static part', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Dynamic part' },
        ],
      }),
    );
  });

  it('refuses empty and blank system text, and cache_control on an empty block', () => {
    refused(
      request({
        system: [
          { type: 'text', text: 'A' },
          { type: 'text', text: '', cache_control: { type: 'ephemeral' } },
        ],
      }),
      'system.1: cache_control cannot be set for empty text blocks',
    );
    refused(
      request({
        system: [
          { type: 'text', text: 'A' },
          { type: 'text', text: '' },
        ],
      }),
      'system: text content blocks must be non-empty',
    );
    refused(request({ system: [{ type: 'text', text: ' \n ' }] }), 'system: text content blocks must contain non-whitespace text');
    refused(request({ system: '' }), 'system: text content blocks must be non-empty');
  });

  it('wants text blocks only', () => {
    refused(request({ system: [{ type: 'image', source: {} }] }), "system.0.type: Input should be 'text'");
    refused(request({ system: [{ type: 'text' }] }), 'system.0.text: Field required');
    refused(request({ system: [{ type: 'text', text: 'a', role: 'system' }] }), 'system.0.role: Extra inputs are not permitted');
    refused(request({ system: 42 }), 'system: Input should be a valid string or list');
  });
});

describe('messages API validator: tools', () => {
  it('wants names matching ^[a-zA-Z0-9_-]{1,128}$', () => {
    ok(request({ tools: [READ, { ...BASH, name: 'mcp__server-1__tool_name' }] }));
    refused(request({ tools: [{ ...READ, name: 'read file' }] }), "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'");
    refused(request({ tools: [READ, { ...BASH, name: 'x'.repeat(129) }] }), "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'");
  });

  it('wants an object input_schema of type "object"', () => {
    refused(request({ tools: [{ name: 'Read' }] }), 'tools.0.custom.input_schema: Field required');
    refused(request({ tools: [{ name: 'Read', input_schema: { type: 'string' } }] }), "tools.0.custom.input_schema.type: Input should be 'object'");
    refused(request({ tools: [{ name: 'Read', input_schema: 'object' }] }), 'tools.0.custom.input_schema: Input should be a valid dictionary');
    // The schema must be draft 2020-12 JSON Schema (a user's --json-schema becomes one).
    for (const schema of [
      { type: 'object', required: 'file_path' },
      { type: 'object', properties: { n: { type: 'integer', minimum: '0' } } },
      { type: 'object', properties: { s: { type: 'strin' } } },
      { type: 'object', additionalProperties: 3 },
    ]) {
      refused(
        request({ tools: [{ name: 'StructuredOutput', input_schema: schema }] }),
        /^tools\.0\.custom\.input_schema: JSON schema is invalid\. It must match JSON Schema draft 2020-12/,
      );
    }
  });

  it('wants unique names and known fields', () => {
    refused(request({ tools: [READ, READ] }), 'tools: Tool names must be unique.');
    refused(request({ tools: [{ ...READ, parameters: {} }] }), 'tools.0.custom.parameters: Extra inputs are not permitted');
    refused(request({ tools: [{ type: 'bash_20250124', name: 'bash' }] }), /^tools\.0: Input tag 'bash_20250124'/);
  });
});

describe('messages API validator: tool_choice and thinking', () => {
  it('checks tool_choice', () => {
    ok(request({ tools: [READ], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }));
    ok(request({ tools: [READ], tool_choice: { type: 'tool', name: 'Read' } }));
    ok(request({ tool_choice: { type: 'none' } }));
    refused(request({ tools: [READ], tool_choice: { type: 'tool', name: 'Write' } }), "tool_choice: tool 'Write' was not found in tools");
    refused(request({ tool_choice: { type: 'any' } }), 'tool_choice may only be specified while providing tools.');
    refused(request({ tools: [READ], tool_choice: { type: 'required' } }), /^tool_choice: Input tag 'required'/);
    refused(request({ tools: [READ], tool_choice: { type: 'tool' } }), 'tool_choice.tool.name: Field required');
  });

  it('wants budget_tokens of at least 1024 and below max_tokens when thinking is enabled', () => {
    ok(request({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } }));
    ok(request({ thinking: { type: 'adaptive' } }));
    ok(request({ thinking: { type: 'disabled' } }));
    refused(
      request({ max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 512 } }),
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    );
    refused(
      request({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }),
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
    );
    refused(request({ thinking: { type: 'enabled' } }), 'thinking.enabled.budget_tokens: Field required');
    refused(request({ thinking: { type: 'on' } }), /^thinking: Input tag 'on'/);
    refused(
      request({ tools: [READ], max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'any' } }),
      'Thinking may not be enabled when tool_choice forces tool use.',
    );
  });

  it('with thinking enabled, wants the assistant turn before the last tool results to start with thinking', () => {
    const thinkingOn = { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } };
    const history = (first: Body) => ({
      ...toolRound(),
      ...thinkingOn,
      messages: [
        { role: 'user', content: 'read it' },
        { role: 'assistant', content: [first, { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'text' }] },
      ],
    });
    ok(history({ type: 'thinking', thinking: 'Let me read it.', signature: 'sig==' }));
    refused(
      history({ type: 'text', text: 'Reading.' }),
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`\. When `thinking` is enabled/,
    );
  });
});

describe('messages API validator: content blocks', () => {
  it('refuses unknown block types and blocks in the wrong role', () => {
    ok(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              { type: 'text', text: 'what is this?' },
            ],
          },
        ],
      }),
    );
    refused(
      request({ messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }),
      /^messages\.0\.content\.0: Input tag 'video' found using 'type' does not match any of the expected tags/,
    );
    refused(
      request({ tools: [READ], messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] }] }),
      'messages.0.content.0: `tool_use` blocks are not allowed in `user` messages',
    );
    refused(
      request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', extra: 1 }] }] }),
      'messages.0.content.0.text.extra: Extra inputs are not permitted',
    );
  });

  it('checks tool_use blocks: id pattern, name, object input', () => {
    ok(toolRound());
    const withUse = (use: Body) =>
      request({
        tools: [READ],
        messages: [
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [{ type: 'tool_use', name: 'Read', input: {}, ...use }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: String(use.id), content: 'x' }] },
        ],
      });
    refused(withUse({ id: 'call.1' }), "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'");
    refused(withUse({ id: 'toolu_1', input: 'cmd' }), 'messages.1.content.0.tool_use.input: Input should be a valid dictionary');
    refused(withUse({ id: 'toolu_1', text: 'hi' }), 'messages.1.content.0.tool_use.text: Extra inputs are not permitted');
  });

  it('wants thinking blocks to keep their signature, and redacted_thinking its data', () => {
    const withAssistant = (block: Body) =>
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [block, { type: 'text', text: 'Answer.' }] },
          { role: 'user', content: 'more' },
        ],
      });
    ok(withAssistant({ type: 'thinking', thinking: 'Hmm.', signature: 'EqQBCkYIBxgCKkA=' }));
    ok(withAssistant({ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' }));
    refused(withAssistant({ type: 'thinking', thinking: 'Hmm.' }), 'messages.1.content.0.thinking.signature: Field required');
    refused(withAssistant({ type: 'thinking', thinking: 'Hmm.', signature: '' }), 'messages.1.content.0: Invalid `signature` in `thinking` block');
    refused(
      withAssistant({ type: 'thinking', thinking: 'Hmm.', signature: 's', cache_control: { type: 'ephemeral' } }),
      'messages.1.content.0.thinking.cache_control: Extra inputs are not permitted',
    );
    refused(withAssistant({ type: 'redacted_thinking' }), 'messages.1.content.0.redacted_thinking.data: Field required');
  });

  it('checks cache_control shapes', () => {
    ok(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }] }));
    refused(
      request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'persistent' } }] }] }),
      /^messages\.0\.content\.0\.cache_control: Input tag 'persistent'/,
    );
    refused(
      request({ system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', scope: 'global' } }] }),
      'system.0.cache_control.ephemeral.scope: Extra inputs are not permitted',
    );
    refused(
      request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '10m' } }] }] }),
      "messages.0.content.0.cache_control.ephemeral.ttl: Input should be '5m' or '1h'",
    );
  });
});

describe('messages API validator: tool_use / tool_result pairing', () => {
  it('wants tools defined when the history has tool blocks', () => {
    ok(toolRound());
    refused({ ...toolRound(), tools: undefined }, 'Requests which include tool_use or tool_result blocks must define tools.');
  });

  it('wants tool_use ids unique', () => {
    ok(
      toolRound(
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok' }] },
      ),
    );
    refused(
      toolRound(
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      ),
      'messages.3.content.0: `tool_use` ids must be unique',
    );
  });

  it('wants every tool_use answered by a tool_result in the next message', () => {
    refused(
      toolRound(
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Now both.' },
            { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: {} },
            { type: 'tool_use', id: 'toolu_3', name: 'Bash', input: {} },
          ],
        },
        { role: 'user', content: 'skip it' },
      ),
      'messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2, toolu_3. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
    // a tool_use in the final assistant message has no next message at all
    refused(
      toolRound({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: {} }] }),
      /^messages\.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2\./,
    );
  });

  it('wants each tool_result to answer a tool_use of the message just before, once', () => {
    refused(
      toolRound({ role: 'assistant', content: 'Done.' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'again' }] }),
      'messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    refused(
      request({ tools: [READ], messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }] }),
      /^messages\.0\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9\./,
    );
    refused(
      request({
        tools: [READ],
        messages: [
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a' },
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'b' },
            ],
          },
        ],
      }),
      'messages.2.content.1: each tool_use must have a single result. Found multiple `tool_result` blocks with id: toolu_1',
    );
  });

  it('wants the tool_result blocks to lead the user message, other blocks after them', () => {
    const round = (content: Body[]) =>
      request({
        tools: [READ],
        messages: [
          { role: 'user', content: 'read' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] },
          { role: 'user', content },
        ],
      });
    ok(
      round([
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' },
        { type: 'text', text: 'Also: hurry.' },
      ]),
    );
    refused(
      round([
        { type: 'text', text: 'Also: hurry.' },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' },
      ]),
      'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
    );
  });
});

describe('messages API validator: cache_control budget', () => {
  const cached = { cache_control: { type: 'ephemeral' } };
  it('allows at most 4 blocks with cache_control in system, tools and messages together', () => {
    ok(
      request({
        system: [
          { type: 'text', text: 'a', ...cached },
          { type: 'text', text: 'b', ...cached },
        ],
        tools: [{ ...READ, ...cached }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', ...cached }] }],
      }),
    );
    refused(
      request({
        system: [
          { type: 'text', text: 'a', ...cached },
          { type: 'text', text: 'b', ...cached },
        ],
        tools: [{ ...READ, ...cached }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi', ...cached },
              { type: 'text', text: 'again', ...cached },
            ],
          },
        ],
      }),
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('wants 1h cache entries before 5m ones', () => {
    ok(
      request({
        system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', ...cached }] }],
      }),
    );
    refused(
      request({
        system: [{ type: 'text', text: 'a', ...cached }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      }),
      "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block",
    );
  });
});

describe('messages API validator: a realistic agent request', () => {
  it('accepts a multi-turn tool conversation with cached system prompt, parallel results and thinking', () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 32000,
      stream: true,
      system: [
        {
          type: 'text',
          text: 'You are durable-agent, an interactive coding agent.\n\n# Doing tasks\n- Read before editing.',
          cache_control: { type: 'ephemeral' },
        },
        { type: 'text', text: '# Environment\nWorking directory: /tmp/ws\nPlatform: linux' },
        { type: 'text', text: 'gitStatus: clean' },
      ],
      tools: [
        READ,
        { name: 'Edit', description: 'Edit a file', input_schema: { type: 'object', properties: {}, required: [] } },
        { ...BASH, cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>\n# currentDate\n2026-01-01\n</system-reminder>' },
            { type: 'text', text: 'The test fails. Fix math.js.' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should read both files first.', signature: 'EqQBCkYIBxgCKkBvZ2xl==' },
            { type: 'text', text: "I'll look at the code and the test." },
            { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: 'math.js' } },
            { type: 'tool_use', id: 'toolu_02', name: 'Read', input: { file_path: 'test.js' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: '1\tfunction sum(numbers) {' },
            { type: 'tool_result', tool_use_id: 'toolu_02', content: [{ type: 'text', text: "1\tconst assert = require('node:assert');" }] },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_03', name: 'Edit', input: { file_path: 'math.js', old_string: 'i = 1', new_string: 'i = 0' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_03', content: 'The file math.js has been updated.' },
            { type: 'text', text: 'Also run the tests, please.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_04', name: 'Bash', input: { command: 'node test.js' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_04', content: 'Exit code 1\nAssertionError', is_error: true }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Still failing; checking average.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Go on.', cache_control: { type: 'ephemeral' } }] },
      ],
    };
    ok(body);
    const { max_tokens: _maxTokens, stream: _stream, ...countable } = body;
    ok(countable, 'count_tokens');
  });
});

describe('context limit (input + max_tokens)', () => {
  it('refuses a request whose estimated input plus max_tokens exceeds the window, as the API words it', () => {
    const body = (maxTokens: number, model = 'claude-sonnet-4-6') => ({
      model,
      max_tokens: maxTokens,
      messages: [{ role: 'user', content: 'x'.repeat(400_000) }],
    });
    expect(validateMessagesRequest(body(90_000), 'messages')).toBeUndefined();
    expect(validateMessagesRequest(body(110_000), 'messages')).toMatch(/^input length and `max_tokens` exceed context limit: \d+ \+ 110000 > 200000/);
    expect(validateMessagesRequest(body(110_000, 'claude-sonnet-5'), 'messages')).toBeUndefined();
  });
});
