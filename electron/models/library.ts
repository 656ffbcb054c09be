// The model library: the default models/ folder plus folders and files the user added
// (remembered in <dataDir>/library.json and referenced in place, never copied). Every entry is
// described from its GGUF header; a bad file is listed with its reason instead of breaking the list.
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { InvalidModel, LibraryListing, ModelEntry, ModelSource, PartialDownload } from '../common/contract/models';
import { UserError, errorMessage } from '../common/errors';
import { defaultModelsDir } from '../paths';
import { readSmallRegularFile } from '../regular-file';
import { JsonFile } from '../state/json-file';
import { inspectModelFile, invalidCode, invalidReason } from './gguf';

export interface ScanResult {
  models: ModelEntry[];
  invalid: InvalidModel[];
  /** Unfinished downloads (`<file>.gguf.partial` with its sidecar), resumable by their source. */
  partials: PartialDownload[];
}

async function readPartial(dir: string, name: string): Promise<PartialDownload | null> {
  const partial = join(dir, name);
  try {
    const side = JSON.parse(await readSmallRegularFile(`${partial}.json`)) as { source?: unknown; url?: unknown; total?: unknown };
    const source = typeof side.source === 'string' && side.source ? side.source : typeof side.url === 'string' ? side.url : null;
    if (!source) return null;
    return { path: partial.replace(/\.partial$/, ''), source, bytes: (await stat(partial)).size, total: typeof side.total === 'number' ? side.total : null };
  } catch {
    return null;
  }
}

/** In-progress download files and our temporaries: never listed, never reported as invalid. */
function isInProgress(name: string): boolean {
  return /\.partial(\.json)?$/i.test(name) || /\.ipull$/i.test(name) || /\.tmp(-[\w-]+)?$/i.test(name) || /\.gguf\.tmp/i.test(name);
}

async function describe(path: string, source: ModelSource, out: ScanResult): Promise<void> {
  try {
    // Inspected once per version of the file (llama/inspection.ts): a rescan costs a stat per model.
    const h = await inspectModelFile(path);
    out.models.push({
      path: h.path,
      fileName: h.fileName,
      name: h.name,
      architecture: h.architecture,
      parameters: h.parameters,
      quantization: h.quantization,
      sizeBytes: h.sizeBytes,
      contextLength: h.contextLength,
      hasChatTemplate: h.hasChatTemplate,
      layers: h.layers,
      source,
    });
  } catch (e) {
    out.invalid.push({ path, reason: invalidReason(e, path), code: invalidCode(e) });
  }
}

/**
 * Describes every `.gguf` in `folders` (not recursive) and every path in `files`, from the header
 * only. Bad files land in `invalid` with a one-line reason; in-progress downloads (`*.partial`)
 * are skipped; a missing folder is reported in `invalid` (code `missing`). Never throws for bad
 * input. `sources` says how each folder/file is labelled (default: `folder` / `file`).
 */
export async function scanLibrary(folders: string[], files: string[] = [], sources: { defaultDir?: string } = {}): Promise<ScanResult> {
  const out: ScanResult = { models: [], invalid: [], partials: [] };
  const seen = new Set<string>();
  const defaultDir = sources.defaultDir ? resolve(sources.defaultDir) : undefined;
  for (const folder of folders) {
    const dir = resolve(folder);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // The default folder may simply not exist yet; that is not worth a red line.
      if (dir === defaultDir && code === 'ENOENT') continue;
      out.invalid.push({
        path: dir,
        reason: code === 'ENOENT' ? 'folder not found' : code === 'ENOTDIR' ? 'not a folder' : `folder unreadable (${code ?? errorMessage(e)})`,
        code: code === 'ENOENT' ? 'missing' : 'unreadable',
      });
      continue;
    }
    for (const name of names.sort((a, b) => a.localeCompare(b))) {
      if (/\.gguf\.partial$/i.test(name)) {
        const p = await readPartial(dir, name);
        if (p) out.partials.push(p);
        continue;
      }
      if (!/\.gguf$/i.test(name) || isInProgress(name)) continue;
      const path = join(dir, name);
      if (seen.has(path)) continue;
      seen.add(path);
      await describe(path, dir === defaultDir ? 'models-dir' : 'folder', out);
    }
  }
  for (const file of files) {
    const path = resolve(file);
    if (seen.has(path) || isInProgress(path)) continue;
    seen.add(path);
    await describe(path, 'file', out);
  }
  return out;
}

const LibraryFile = z.object({
  folders: z.array(z.string()).default([]),
  files: z.array(z.string()).default([]),
});
type LibraryFile = z.infer<typeof LibraryFile>;

export interface ModelLibraryOptions {
  /** The always-scanned folder (default: the app's models/). */
  defaultDir?: string;
  /** More folders to scan that the user manages elsewhere (settings, command line); read-only here. */
  extraFolders?: () => readonly string[] | Promise<readonly string[]>;
}

/** The user's library: default folder + added folders/files, persisted in `<dataDir>/library.json`. */
export class ModelLibrary {
  readonly defaultDir: string;
  private readonly file: JsonFile<LibraryFile>;

  constructor(
    readonly dataDir: string,
    private readonly options: ModelLibraryOptions = {},
  ) {
    this.defaultDir = resolve(options.defaultDir ?? defaultModelsDir());
    this.file = new JsonFile(join(dataDir, 'library.json'), { schema: LibraryFile, empty: () => ({ folders: [], files: [] }), code: 'library_invalid' });
  }

  /** Scan everything the library references. */
  async list(): Promise<LibraryListing> {
    const lib = await this.file.read();
    const extra = [...((await this.options.extraFolders?.()) ?? [])].map((f) => resolve(f));
    const folders = [this.defaultDir, ...lib.folders, ...extra.filter((f) => !lib.folders.includes(f) && f !== this.defaultDir)];
    const scan = await scanLibrary(folders, lib.files, { defaultDir: this.defaultDir });
    return { ...scan, defaultDir: this.defaultDir, folders: lib.folders, files: lib.files };
  }

  /** Add a folder (UserError when it is not a readable folder). */
  async addFolder(path: string): Promise<LibraryListing> {
    const dir = resolve(path);
    let st;
    try {
      st = await stat(dir);
    } catch {
      throw new UserError(`folder not found: ${dir}`, 'library_missing');
    }
    if (!st.isDirectory()) throw new UserError(`not a folder: ${dir} (use "add file" for a single model)`, 'library_not_folder');
    try {
      await readdir(dir);
    } catch (e) {
      throw new UserError(`cannot read folder ${dir} (${(e as NodeJS.ErrnoException).code ?? errorMessage(e)})`, 'library_unreadable');
    }
    if (dir !== this.defaultDir) await this.file.update((lib) => (lib.folders.includes(dir) ? lib : { ...lib, folders: [...lib.folders, dir] }));
    return this.list();
  }

  /** Add one file (UserError when it is missing, not a .gguf or not a usable GGUF, with the reason). */
  async addFile(path: string): Promise<LibraryListing> {
    const file = resolve(path);
    let st;
    try {
      st = await stat(file);
    } catch {
      throw new UserError(`file not found: ${file}`, 'library_missing');
    }
    if (st.isDirectory()) throw new UserError(`${file} is a folder; use "add folder"`, 'library_not_file');
    if (!/\.gguf$/i.test(file)) throw new UserError(`${file} is not a .gguf file`, 'library_not_gguf');
    // A file that is not a usable GGUF is refused with its reason, not kept as an unusable entry.
    await inspectModelFile(file, { checkData: true });
    await this.file.update((lib) => (lib.files.includes(file) ? lib : { ...lib, files: [...lib.files, file] }));
    return this.list();
  }

  /** Forget an added folder or file; never deletes anything on disk. */
  async remove(path: string): Promise<LibraryListing> {
    const p = resolve(path);
    await this.file.update((lib) => {
      if (!lib.folders.includes(p) && !lib.files.includes(p)) {
        if (p === this.defaultDir) throw new UserError('the default models folder is always scanned and cannot be removed', 'library_default');
        throw new UserError(`${p} is not in the library (only added folders and files can be removed)`, 'library_unknown');
      }
      return { folders: lib.folders.filter((f) => f !== p), files: lib.files.filter((f) => f !== p) };
    });
    return this.list();
  }
}
