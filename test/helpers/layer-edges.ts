// The layer edges the code really has: every import of every file under electron/ and
// renderer/src, resolved to the file it names and mapped to that file's layer as eslint.config.js
// sees it (a folder of electron/, renderer/src, electron/'s own files as the shell, and the leaf
// files of the `paths` category). Type-only and dynamic imports count: the layer rule checks them too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '../..');

/** Leaf files any main-process layer may use (eslint.config.js layerFiles, category `paths`). */
const PATHS_FILES = new Set(['electron/paths.ts', 'electron/processes.ts', 'electron/regular-file.ts']);

/** The layer of a repository-relative file, as the lint rule names it (null: outside every layer). */
export function layerOf(file: string): string | null {
  if (PATHS_FILES.has(file)) return 'paths';
  if (file === 'electron/preload.ts') return 'preload';
  if (file.startsWith('renderer/src/')) return 'renderer';
  const m = /^electron\/(?:([^/]+)\/)?[^/]+$/.exec(file) ?? /^electron\/([^/]+)\//.exec(file);
  if (!m) return null;
  return m[1] ?? 'shell';
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative import names (TypeScript's resolution of a bundler import), or null. */
function resolveImport(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec.replace(/\.js$/, ''));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Every edge between two different layers, `from -> to`, with one import that makes it. */
export function layerEdges(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of [...sources(join(root, 'electron')), ...sources(join(root, 'renderer/src'))]) {
    const rel = relative(root, file).split(sep).join('/');
    const from = layerOf(rel);
    if (from === null) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveImport(file, fileName);
      if (target === null) continue;
      const to = layerOf(relative(root, target).split(sep).join('/'));
      if (to === null || to === from) continue;
      const key = `${from} -> ${to}`;
      if (!edges.has(key)) edges.set(key, `${rel}: '${fileName}'`);
    }
  }
  return edges;
}
