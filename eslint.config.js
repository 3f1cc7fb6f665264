// Lint rules that keep the workflow deterministic and promises handled (style §1).
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

module.exports = tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.durable-agent/**',
      'eslint.config.js',
      'bin/**',
      'infra/encrypted-failure-converter.js',
      'worker/*.cjs',
      'test/helpers/*.cjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node APIs, no activity implementations.
    files: ['workflows/**/*.ts', 'common/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code must be deterministic: no Node built-ins.' })),
          patterns: [
            // Types included: the activities' interface lives on the shared side (common/activity-interface.ts).
            {
              group: ['**/activities', '**/activities/**'],
              message: 'Workflows reach activities only through proxyActivities<Activities> (common/activity-interface.ts).',
            },
            { group: ['@anthropic-ai/sdk', '@temporalio/worker', '@temporalio/client', '@temporalio/activity'], message: 'Not in workflow code.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Not deterministic.' },
        { name: 'process', message: 'No process in workflow code.' },
      ],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Not deterministic.' }],
    },
  },
);
