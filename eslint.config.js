// Lint rules that keep the workflow deterministic and promises handled (style §1).
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];
const deterministicPaths = nodeBuiltins.map((name) => ({ name, message: 'Workflow code must be deterministic: no Node built-ins.' }));
const deterministicPatterns = [
  // Types included: the activities' interface lives on the shared side (common/activity-interface.ts).
  {
    group: ['**/activities', '**/activities/**'],
    message: 'Workflows reach activities only through proxyActivities<Activities> (common/activity-interface.ts).',
  },
  { group: ['@anthropic-ai/sdk', '@temporalio/worker', '@temporalio/client', '@temporalio/activity'], message: 'Not in workflow code.' },
];
const notWorkflows = { group: ['**/workflows', '**/workflows/**'], message: 'Move what both sides need into common/ (docs/architecture.md).' };

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
      'no-restricted-imports': ['error', { paths: deterministicPaths, patterns: deterministicPatterns }],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Not deterministic.' },
        { name: 'process', message: 'No process in workflow code.' },
      ],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Not deterministic.' }],
    },
  },
  {
    // What both sides need lives in common/: the shared side and the activities never import the workflow side.
    files: ['common/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: deterministicPaths, patterns: [...deterministicPatterns, notWorkflows] }] },
  },
  {
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [notWorkflows] }] },
  },
);
