// Layers you can see in folder names, enforced here:
//   electron/common  - no Node, no DOM: the API contract, schemas, pure helpers (renderer may import)
//   electron/engine  - the TATRA method; knows only its backend interface (no node-llama-cpp, no electron)
//   electron/**      - main-process code: node-llama-cpp, SQLite, fs
//   renderer/**      - the UI: may import electron/common only
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

const nodeOnly = ['node-llama-cpp', 'better-sqlite3', 'electron', 'ws', 'commander', 'csv-parse', 'cli-progress'];
const nodeOnlyPatterns = [...nodeOnly, ...nodeOnly.map((m) => `${m}/*`), 'node:*', 'fs', 'path', 'os', 'child_process'];

export default tseslint.config(
  { ignores: ['dist/**', 'release/**', '.cache/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', 'e2e/artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Plain JS launchers and build scripts run on Node.
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['electron/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: [...nodeOnlyPatterns, 'react', 'react-dom', '../engine/*', '../llama/*', '../jobs/*', '../models/*', '../api/*', '../server/*', '../cli/*'], message: 'electron/common must stay free of Node, DOM and main-process modules.' }] }],
    },
  },
  {
    files: ['electron/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node-llama-cpp', 'electron', 'better-sqlite3', '../llama/*', '../jobs/*', '../models/*', '../api/*', '../server/*', '../cli/*'], message: 'The engine knows only its backend interface.' }] }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // Bare module names go in `paths` (exact match): as gitignore-style `patterns`, "electron"
      // would also match the electron/ folder of every '../../electron/common/...' import.
      'no-restricted-imports': ['error', {
        paths: [...nodeOnly, 'fs', 'path', 'os', 'child_process'].map((name) => ({ name, message: 'The renderer may import electron/common only; everything else goes through the API client.' })),
        patterns: [{ group: [...nodeOnly.map((m) => `${m}/*`), 'node:*', '**/electron/engine/**', '**/electron/llama/**', '**/electron/jobs/**', '**/electron/models/**', '**/electron/api/**', '**/electron/server/**', '**/electron/cli/**', '**/electron/*.ts', '**/electron/main', '**/electron/preload', '**/electron/paths'], message: 'The renderer may import electron/common only; everything else goes through the API client.' }],
      }],
    },
  },
);
