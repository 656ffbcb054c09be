// The curated catalog (models/catalog.json): the paper's models and smaller ones for laptops.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CatalogEntry } from '../common/contract/models';
import { UserError } from '../common/errors';
import { appRoot } from '../paths';

const CatalogFile = z.object({ models: z.array(CatalogEntry) });

/** Path of models/catalog.json in the app root. */
export function catalogPath(): string {
  return join(appRoot(), 'models', 'catalog.json');
}

/** The catalog, validated (UserError when the file is broken). */
export async function loadCatalog(path: string = catalogPath()): Promise<CatalogEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read the model catalog ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'catalog_invalid');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UserError(`the model catalog ${path} is not valid JSON: ${(e as Error).message}`, 'catalog_invalid');
  }
  const parsed = CatalogFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`the model catalog ${path} is invalid at ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'unknown'}`, 'catalog_invalid');
  }
  return parsed.data.models;
}

/** The catalog entry with this id, or undefined. */
export async function findCatalogEntry(id: string, path?: string): Promise<CatalogEntry | undefined> {
  return (await loadCatalog(path)).find((m) => m.id === id);
}
