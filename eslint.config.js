// Layers you can see in folder names, enforced here:
//   electron/common  - no Node, no DOM: the API contract, schemas, pure helpers (renderer may import)
//   electron/net     - the one HTTP client (inference servers, downloads, the Hugging Face API)
//   electron/remote  - TatraBackend over OpenAI-compatible servers (beside llama/, which never imports it)
//   electron/hold    - holding models, local or remote: the pool and its leases, above llama/ and remote/
//   electron/engine  - the TATRA method; knows only its backend interface (no node-llama-cpp, no electron, no fs)
//   electron/state   - small state in JSON files: schema-checked reads, atomic locked writes
//   electron/**      - main-process code: node-llama-cpp, SQLite, fs
//   renderer/**      - the UI: may import electron/common only
// Which folder may import which is LAYERS below, checked by eslint-plugin-boundaries on the resolved
// path of every import, so '../../llama/backend' from electron/common/contract/ is caught like
// '../llama/backend' (path patterns in no-restricted-imports only ever reached one level).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import boundaries from 'eslint-plugin-boundaries';
import globals from 'globals';

/**
 * Layer → the layers it may import (itself included). Lowest first; nothing may import upward.
 * Only edges some import uses are granted (test/unit/lint/layers.test.ts computes them): a new
 * edge is added here with the import that needs it.
 * `web` (static files, headers) and `paths` (data folder, app root) are leaves any main-process
 * layer may use; `shell` is Electron's main-process files, `preload` sees the contract only.
 */
export const LAYERS = {
  common: ['common'],
  engine: ['common', 'engine'],
  net: ['common', 'net'],
  // One small JSON state file read and written one way (json-file.ts); any main-process layer may keep one.
  state: ['common', 'paths', 'state'],
  remote: ['common', 'engine', 'net', 'remote'],
  llama: ['common', 'engine', 'state', 'paths', 'llama'],
  // Holding models, local (llama/) or remote (remote/) by their spec: the pool, the models of a plan.
  hold: ['common', 'engine', 'remote', 'llama', 'hold'],
  tasks: ['common', 'tasks'],
  web: ['common', 'web'],
  jobs: ['common', 'engine', 'remote', 'llama', 'hold', 'tasks', 'state', 'paths', 'jobs'],
  models: ['common', 'net', 'remote', 'llama', 'state', 'paths', 'models'],
  // Grids of jobs run as one piece of work (sweeps, comparisons): above the jobs and the model library.
  experiments: ['common', 'engine', 'remote', 'jobs', 'models', 'experiments'],
  api: ['common', 'engine', 'llama', 'hold', 'tasks', 'state', 'jobs', 'models', 'experiments', 'web', 'paths', 'api'],
  server: ['common', 'api', 'web', 'server'],
  // `tatra api`, the OpenAI-compatible face: the engine's classify() on the models the composition root loads.
  service: ['common', 'engine', 'state', 'web', 'service'],
  cli: ['common', 'engine', 'remote', 'llama', 'hold', 'tasks', 'jobs', 'models', 'experiments', 'api', 'server', 'service', 'paths', 'cli'],
  shell: ['common', 'api', 'web', 'paths', 'shell'],
  renderer: ['common', 'renderer'],
};

// Folders are layers; electron/'s own files are the Electron shell, except paths.ts (data folder
// and app root: a leaf every main-process layer may use) and preload.ts (sees the contract only).
const layerFolders = ['common', 'engine', 'net', 'remote', 'state', 'llama', 'hold', 'tasks', 'web', 'jobs', 'models', 'experiments', 'api', 'server', 'service', 'cli'];
const layerElements = [
  ...layerFolders.map((type) => ({ type, pattern: `electron/${type}`, partialMatch: false })),
  { type: 'renderer', pattern: 'renderer/src', partialMatch: false },
  { type: 'shell', pattern: 'electron', partialMatch: false },
];
const layerFiles = [
  { category: 'paths', pattern: 'electron/paths.ts' },
  // Whether a pid lives, and temp folders owned by a process: a Node-only leaf like paths.ts.
  { category: 'paths', pattern: 'electron/processes.ts' },
  // Opening outside files without blocking on a FIFO or a device: the same kind of leaf.
  { category: 'paths', pattern: 'electron/regular-file.ts' },
  { category: 'preload', pattern: 'electron/preload.ts' },
];
const to = (types) => {
  const layers = types.filter((t) => t !== 'paths');
  return [
    { to: { element: { types: { anyOf: layers } } } },
    ...(types.includes('paths') ? [{ to: { file: { categories: 'paths' } } }] : []),
  ];
};
const layerPolicies = [
  ...Object.entries(LAYERS).flatMap(([from, types]) => to(types).map((allow) => ({ from: { element: { type: from } }, allow }))),
  // paths.ts uses Node only; preload.ts sees the contract (electron/common) only.
  { from: { file: { categories: 'paths' } }, disallow: { to: { element: { types: { anyOf: Object.keys(LAYERS) } } } } },
  { from: { file: { categories: 'preload' } }, disallow: { to: { element: { types: { anyOf: Object.keys(LAYERS).filter((t) => t !== 'common') } } } } },
];

const ONE_HTTP_CLIENT = 'HTTP requests go through electron/net/http.ts (the one HTTP client).';
const httpRequestSyntax = [
  { selector: 'ImportDeclaration[source.value=/^(node:)?https$|^undici$/]', message: ONE_HTTP_CLIENT },
  { selector: 'ImportDeclaration[source.value=/^(node:)?http$/] > ImportSpecifier[imported.name=/^(request|get)$/]', message: ONE_HTTP_CLIENT },
];

// One byte formatter (electron/common/bytes.ts, binary units named as such): a face that does its
// own 1024 ** n or writes "GB" prints another number for the same file.
const ONE_BYTE_FORMATTER = 'Sizes are printed by formatBytes (electron/common/bytes.ts): binary units, named as such.';
const byteFormatSyntax = [
  { selector: "BinaryExpression[operator='**'][left.value=1024]", message: ONE_BYTE_FORMATTER },
  { selector: 'Literal[value=/^ ?[kKMGT]i?B$/]', message: ONE_BYTE_FORMATTER },
  { selector: 'TemplateElement[value.raw=/^ ?[kKMGT]i?B\\b/]', message: ONE_BYTE_FORMATTER },
];

// node-llama-cpp's private members are reached in one module, checked against the pinned version
// when the runtime starts (electron/llama/internals.ts): nothing else names a `_member`.
const ONE_INTERNALS_MODULE = "A dependency's private members are reached in electron/llama/internals.ts only (checked against the pinned version).";
const privateMemberSyntax = [{ selector: 'MemberExpression[property.name=/^_[a-zA-Z]/]', message: ONE_INTERNALS_MODULE }];

// One 'abort' listener per signal, however many wait on it (electron/common/abort.ts onAbort): a
// listener per waiter is what made Node warn of a leak past 10, the cause setMaxListeners hid.
const abortListenerSyntax = [{ selector: "CallExpression[callee.property.name='addEventListener'][arguments.0.value='abort']", message: "Wait on a signal with onAbort (electron/common/abort.ts), not addEventListener('abort', …): one listener per signal." }];

// Small modules named for what they hold: no file over 550 lines, no function over 100 (counted as
// written, blank lines and comments too). The files below are over one of them today and are split
// next; a file leaves its list when it is split (test/unit/lint/size.test.ts fails while a listed
// file is back under the limit) and none is added.
export const MAX_LINES = 550;
export const MAX_FUNCTION_LINES = 100;
/** @type {string[]} Files allowed over MAX_LINES while they are split (none now). */
export const LONG_FILES = [];
/** @type {string[]} Files allowed functions over MAX_FUNCTION_LINES while they are split (none now). */
export const LONG_FUNCTION_FILES = [];

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
    files: ['electron/**/*.ts', 'renderer/src/**/*.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: MAX_LINES, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  ...(LONG_FILES.length > 0 ? [{ files: LONG_FILES, rules: { 'max-lines': 'off' } }] : []),
  ...(LONG_FUNCTION_FILES.length > 0 ? [{ files: LONG_FUNCTION_FILES, rules: { 'max-lines-per-function': 'off' } }] : []),
  {
    // Plain JS launchers and build scripts run on Node.
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['electron/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': layerElements,
      'boundaries/files': layerFiles,
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.mjs'] } },
    },
    rules: {
      'boundaries/dependencies': ['error', {
        default: 'disallow',
        message: '{{from.type}} may not import {{to.type}}: the layer order is in eslint.config.js (LAYERS)',
        policies: layerPolicies,
      }],
    },
  },
  {
    // One HTTP client (electron/net/http.ts): its failure words, key redaction and answer schemas
    // hold only if nothing else opens connections.
    files: ['electron/**/*.ts'],
    ignores: ['electron/net/**'],
    rules: {
      'no-restricted-globals': ['error', { name: 'fetch', message: ONE_HTTP_CLIENT }],
      'no-restricted-syntax': ['error', ...httpRequestSyntax, ...byteFormatSyntax, ...privateMemberSyntax, ...abortListenerSyntax],
    },
  },
  {
    // The one module that reaches node-llama-cpp's private members.
    files: ['electron/llama/internals.ts'],
    rules: { 'no-restricted-syntax': ['error', ...httpRequestSyntax, ...byteFormatSyntax, ...abortListenerSyntax] },
  },
  {
    // The one byte formatter itself.
    files: ['electron/common/bytes.ts'],
    rules: { 'no-restricted-syntax': ['error', ...httpRequestSyntax, ...abortListenerSyntax] },
  },
  {
    // The one abort listener of a signal itself.
    files: ['electron/common/abort.ts'],
    rules: { 'no-restricted-syntax': ['error', ...httpRequestSyntax, ...byteFormatSyntax, ...privateMemberSyntax] },
  },
  {
    // One way out to the terminal (electron/cli/ui.ts write/out/err, terminal.ts's rule): a
    // command writing to process.stdout itself would still be escaped by the guard, but its
    // columns and cuts would be measured on unescaped text.
    files: ['electron/cli/**/*.ts'],
    ignores: ['electron/cli/ui.ts', 'electron/cli/terminal.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...httpRequestSyntax, ...byteFormatSyntax, ...privateMemberSyntax, ...abortListenerSyntax,
        { selector: "MemberExpression[object.object.name='process'][object.property.name=/^std(out|err)$/][property.name='write']", message: 'CLI output goes through electron/cli/ui.ts (write, out, err, outJson).' },
        { selector: "MemberExpression[object.name='console']", message: 'CLI output goes through electron/cli/ui.ts (write, out, err, outJson).' },
      ],
    },
  },
  {
    files: ['electron/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: [...nodeOnlyPatterns, 'react', 'react-dom'], message: 'electron/common must stay free of Node, DOM and main-process modules.' }] }],
    },
  },
  {
    files: ['electron/engine/**/*.ts'],
    rules: {
      // No fs either: reading task files is electron/tasks' job; the engine takes tasks as data.
      'no-restricted-imports': ['error', { patterns: [{ group: ['node-llama-cpp', 'electron', 'better-sqlite3', 'ws', 'commander', 'csv-parse', 'cli-progress', 'node:fs', 'node:fs/*', 'fs', 'fs/*', 'node:child_process', 'child_process'], message: 'The engine knows only its backend interface and takes tasks as data.' }] }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-syntax': ['error', ...byteFormatSyntax],
      // Bare module names go in `paths` (exact match): as gitignore-style `patterns`, "electron"
      // would also match the electron/ folder of every '../../electron/common/...' import.
      'no-restricted-imports': ['error', {
        paths: [...nodeOnly, 'fs', 'path', 'os', 'child_process'].map((name) => ({ name, message: 'The renderer may import electron/common only; everything else goes through the API client.' })),
        patterns: [{ group: [...nodeOnly.map((m) => `${m}/*`), 'node:*', '**/electron/engine/**', '**/electron/llama/**', '**/electron/jobs/**', '**/electron/models/**', '**/electron/api/**', '**/electron/server/**', '**/electron/cli/**', '**/electron/*.ts', '**/electron/main', '**/electron/preload', '**/electron/paths'], message: 'The renderer may import electron/common only; everything else goes through the API client.' }],
      }],
    },
  },
);
