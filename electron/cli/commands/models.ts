// `tatra models`: the model library (list, info with a fit estimate, add/remove folders and files),
// the curated catalog, and verified, resumable downloads with a progress bar. Thin: the work is in
// electron/models.
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import type { DownloadState, FitEstimate, InvalidModel, ModelEntry, PartialDownload } from '../../common/contract/models';
import { downloadModel, estimateFit, hardwareInfo, inspectModelFile, invalidReason, loadCatalog, scanLibrary, validateModelFile } from '../../models';
import { disposeLlamaRuntime } from '../../llama';
import { defaultModelsDir } from '../../paths';
import { intOption } from '../options';
import { refusingEndpoint, remoteHealth, type RemoteHealth } from '../../models/remote-health';
import { MAX_IN_FLIGHT, normaliseBaseUrl, remoteLabel } from '../../common/remote';
import { defaultMaxInFlight } from '../../remote';
import { UserError } from '../../common/errors';
import { ifMissing } from '../../common/env-errors';
import { formatBytes, formatParams } from '../../common/bytes';
import { backendLabel, gpuLabel, vramLines } from '../../common/gpu';
import { openCliServices, withCliServices } from '../session';
import { err, eta, interruptSignal, out, outJson, progressBar, table as indentedTable } from '../ui';

/** The model commands' tables start at the margin. */
function table(rows: string[][], right: (c: number) => boolean): string {
  return indentedTable(rows, right, '');
}

export function formatLibrary(models: ModelEntry[], invalid: InvalidModel[], partials: PartialDownload[] = []): string {
  const out: string[] = [];
  if (models.length === 0) out.push('no models found');
  else {
    out.push(
      table(
        [
          ['name', 'arch', 'params', 'quant', 'size', 'context', 'template', 'path'],
          ...models.map((m) => [m.name, m.architecture, formatParams(m.parameters), m.quantization ?? '—', formatBytes(m.sizeBytes), m.contextLength?.toLocaleString('en-US') ?? '—', m.hasChatTemplate ? 'yes' : 'no', m.path]),
        ],
        (c) => c === 2 || c === 4 || c === 5,
      ),
    );
  }
  if (invalid.length > 0) {
    out.push('');
    out.push(`${invalid.length} unusable file${invalid.length === 1 ? '' : 's'}:`);
    for (const i of invalid) out.push(`  ${i.path}: ${i.reason}`);
  }
  if (partials.length > 0) {
    out.push('');
    out.push(`${partials.length} unfinished download${partials.length === 1 ? '' : 's'}:`);
    for (const p of partials) {
      const dir = p.path.replace(/[\\/][^\\/]*$/, '');
      out.push(`  ${p.path}: ${formatBytes(p.bytes)}${p.total !== null ? ` of ${formatBytes(p.total)}` : ''}; resume with: tatra models download ${p.source} --dir ${dir}`);
    }
  }
  return out.join('\n');
}

export function formatRemotes(remotes: RemoteHealth[]): string {
  const rows = [['remote', 'model', 'kind', 'version', 'context', 'constrained', 'in flight', 'endpoint', 'health']];
  for (const r of remotes) {
    r.endpoints.forEach((e, i) => {
      const first = i === 0;
      const kind = r.entry.kind ?? e.probe?.kind;
      // Per endpoint at most: what the entry says, else what the server's kind takes.
      const inFlight = r.entry.maxInFlight !== undefined ? String(r.entry.maxInFlight) : kind ? `${defaultMaxInFlight(kind, e.probe?.slots ?? null)} (default)` : '—';
      rows.push([
        first ? remoteLabel(r.entry) : '',
        first ? r.entry.model : '',
        first ? (e.probe?.kind ?? r.entry.kind ?? '—') : '',
        first ? (e.probe?.version ?? '—') : '',
        first ? (e.probe?.contextLength?.toLocaleString('en-US') ?? '—') : '',
        first ? (e.probe?.constrained ?? '—') : '',
        inFlight,
        e.url,
        e.up ? 'up' : `DOWN: ${e.error ?? 'no answer'}`,
      ]);
    });
  }
  return table(rows, (c) => c === 4 || c === 6);
}

/** The fit check: the backend and cards it was made against, where the layers go, memory against what is free. */
export function formatFit(f: FitEstimate): string {
  const cards = vramLines(f.gpu);
  const lines = [
    `backend        ${f.gpu.backend === 'cpu' ? 'CPU (no GPU backend)' : `${backendLabel(f.gpu.backend)}: ${f.gpu.cards.map((c) => c.name).join(' + ') || 'GPU'}`}${f.gpu.standIn ? ' (stand-in, not this machine)' : ''}`,
    ...cards.map((l, i) => `${i === 0 ? 'VRAM' : ''}`.padEnd(15) + l),
    `offload        ${f.offload}`,
    `memory needed  ${formatBytes(f.totalBytes)} (${formatBytes(f.modelBytes)} weights + ${formatBytes(f.contextBytes)} for ${f.contextSize} tokens × ${f.sequences} sequence${f.sequences === 1 ? '' : 's'})`,
    `plan           ${formatBytes(f.ramBytes)} RAM${f.vramBytes > 0 ? ` + ${formatBytes(f.vramBytes)} VRAM` : ''}`,
    `available      ${formatBytes(f.ramFree)} RAM free${f.gpu.backend !== 'cpu' ? `, ${formatBytes(f.vramFree)} VRAM free` : ''}`,
    `fits           ${f.fits ? 'yes' : 'NO'}`,
  ];
  if (f.warning) lines.push(`warning        ${f.warning}`);
  return lines.join('\n');
}

function downloadLine(s: DownloadState): string {
  const total = s.total !== null ? ` of ${formatBytes(s.total)}` : '';
  return `${formatBytes(s.bytes)}${total}  ${formatBytes(s.rate)}/s  ETA ${eta(s.etaSeconds)}`;
}

export function registerModels(program: Command): void {
  const models = program.command('models').description('the model library, hardware fit, the catalog and downloads');
  listCommand(models);
  remoteCommands(models);
  infoCommand(models);
  catalogCommands(models);
  libraryEditCommands(models);
}

/** `models list`: the library, or the folders given, with remote models' health. */
function listCommand(models: Command): void {
  models
    .command('list')
    .description('list GGUF models (the library: models/ plus added folders and files; or only the folders given)')
    .argument('[folders...]', 'folders to scan instead of the library')
    .option('--data-dir <dir>', 'data folder holding library.json (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--json', 'print JSON')
    .action(async (folders: string[], opts: { dataDir?: string; json?: boolean }) => {
      if (folders.length > 0) {
        // An argument may also be a single file.
        const dirs: string[] = [];
        const files: string[] = [];
        for (const f of folders) ((await stat(f).catch(ifMissing(null)))?.isFile() ? files : dirs).push(f);
        const listing = await scanLibrary(dirs, files);
        if (opts.json) outJson(listing);
        else out(formatLibrary(listing.models, listing.invalid, listing.partials));
        return;
      }
      await withCliServices(opts, async (services) => {
        const library = await services.library.list();
        // Remote entries with their health, probed now (each endpoint within a few seconds).
        const remotes = await remoteHealth(await services.remotes.list(), { env: process.env });
        if (opts.json) outJson({ ...library, remotes });
        else out(`${formatLibrary(library.models, library.invalid, library.partials)}${remotes.length > 0 ? `\n\n${formatRemotes(remotes)}` : ''}`);
      });
    });
}

/** `models add-remote` / `remove-remote`: remote models of the library (remote:NAME). */
function remoteCommands(models: Command): void {
  models
    .command('add-remote')
    .description('add a remote model (an OpenAI-compatible server: vLLM, llama-server, Ollama, LM Studio, OpenAI), used as remote:NAME')
    .argument('<name>', 'the name to use it by (remote:NAME)')
    .requiredOption('--url <url>', 'the server\'s OpenAI API root, e.g. http://gpu1:8000/v1; repeat for replicas of the same model', (v: string, acc: string[] = []) => [...acc, v])
    .requiredOption('--model <id>', 'the model id on the server')
    .option('--key-env <VAR>', 'environment variable holding the API key (the key itself is never stored by the CLI)')
    .option(
      '--max-in-flight <N>',
      'requests in flight per endpoint at most (default: what the server takes: llama-server twice its slots, vLLM 256 (its default --max-num-seqs; raise it for a server started with more), others 8)',
      intOption('--max-in-flight', MAX_IN_FLIGHT.min, MAX_IN_FLIGHT.max),
    )
    .option('--no-probe', 'add without asking the server (it may be down now)')
    .option('--data-dir <dir>', 'data folder holding the library')
    .action(async (name: string, opts: { url: string[]; model: string; keyEnv?: string; maxInFlight?: number; probe: boolean; dataDir?: string }) => {
      const lib = openCliServices(opts).remotes;
      const input = {
        name,
        urls: opts.url.map(normaliseBaseUrl),
        model: opts.model,
        ...(opts.keyEnv ? { keyEnv: opts.keyEnv } : {}),
        ...(opts.maxInFlight !== undefined ? { maxInFlight: opts.maxInFlight } : {}),
      };
      let health: RemoteHealth | undefined;
      if (opts.probe) {
        if (opts.keyEnv && !process.env[opts.keyEnv]) throw new UserError(`$${opts.keyEnv} is not set; export the API key in it first (or add with --no-probe)`, 'remote_key_missing');
        // Probed before it is saved: a wrong key, an unknown model or a server that is not
        // OpenAI-compatible is refused; a server that is merely down now is kept, with a note.
        [health] = await remoteHealth([{ ...input }], { env: process.env });
        const refused = refusingEndpoint(health?.endpoints ?? []);
        if (refused) throw new UserError(refused.error ?? `${refused.url} refused`, 'remote_refused');
      }
      const entry = await lib.add(input);
      if (!health) {
        out(`added remote:${entry.name} (not probed)`);
        return;
      }
      out(`added remote:${entry.name}\n\n${formatRemotes([{ ...health, entry }])}`);
      if (health.endpoints.every((e) => !e.up)) err(`note: no endpoint of remote:${entry.name} answers now; it is kept and will be used once it does`);
    });

  models
    .command('remove-remote')
    .description('forget a remote model (and any key typed for it)')
    .argument('<name>', 'its name')
    .option('--data-dir <dir>', 'data folder holding the library')
    .action(async (name: string, opts: { dataDir?: string }) => {
      await openCliServices(opts).remotes.remove(name.replace(/^remote:/, ''));
      out(`removed remote:${name.replace(/^remote:/, '')}`);
    });
}

/** `models info`: one model's header and whether it fits this machine. */
function infoCommand(models: Command): void {
  models
    .command('info')
    .description('describe one GGUF from its header and estimate whether it fits this machine')
    .argument('<file>', 'GGUF file')
    .option('--context-size <tokens>', 'context size per sequence for the estimate', intOption('--context-size', 64, 1_048_576), 4096)
    .option('--sequences <N>', 'parallel sequences for the estimate', intOption('--sequences', 1, 64), 4)
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { contextSize: number; sequences: number; json?: boolean }) => {
      const path = resolve(file);
      try {
        // Header first (a truncated file can still be described and estimated), then the full check.
        const model = await inspectModelFile(path, { checkData: false });
        const problem = await validateModelFile(path).then(
          () => null,
          (e: unknown) => invalidReason(e, path),
        );
        const fit = await estimateFit(path, { contextSize: opts.contextSize, sequences: opts.sequences });
        // The same GPU facts the estimate was made against.
        const hw = await hardwareInfo(undefined, fit.gpu);
        if (problem !== null) {
          // Exit 2 says something is wrong; stderr says what, last (stdout still gets the description).
          process.exitCode = 2;
          err(`tatra: ${path} is not usable: ${problem}`);
        }
        if (opts.json) {
          outJson({ model, usable: problem === null, problem, fit, hardware: hw });
          return;
        }
        const rows = [
          ['name', model.name],
          ['file', model.path],
          ['architecture', model.architecture],
          ['parameters', `${formatParams(model.parameters)}${model.parameters !== null ? ` (${model.parameters.toLocaleString('en-US')})` : ''}`],
          ['quantisation', model.quantization ?? '—'],
          ['size', formatBytes(model.sizeBytes)],
          ['layers', model.layers === null ? '—' : String(model.layers)],
          ['trained context', model.contextLength === null ? '—' : model.contextLength.toLocaleString('en-US')],
          ['chat template', model.hasChatTemplate ? 'yes' : 'no (a generic template will be used)'],
          ['usable', problem === null ? 'yes' : `NO: ${problem}`],
          ['hardware', `${gpuLabel(hw.gpu)}, ${hw.cpuCores} cores, ${formatBytes(hw.ram.total)} RAM`],
        ];
        out(`${table(rows, () => false)}\n\n${formatFit(fit)}`);
      } finally {
        await disposeLlamaRuntime();
      }
    });
}

/** `models catalog` / `download`: the catalog's models and fetching one. */
function catalogCommands(models: Command): void {
  models
    .command('catalog')
    .description('the curated models that `tatra models download <id>` can fetch')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const catalog = await loadCatalog();
      if (opts.json) {
        outJson(catalog);
        return;
      }
      out(table([['id', 'model', 'quant', 'size', 'paper', 'uri'], ...catalog.map((c) => [c.id, c.name, c.quantization, `~${formatBytes(c.sizeBytes)}`, c.paper ? 'yes' : '', c.uri])], (c) => c === 3));
    });

  models
    .command('download')
    .description('download a model (catalog id, hf:user/repo/file.gguf, hf:user/repo:QUANT or an https URL); resumable, verified')
    .argument('<source>', 'catalog id, hf: URI or https URL')
    .option('--dir <dir>', 'folder to put it in (default: the models/ folder)')
    .option('--json', 'print the final state as JSON')
    .action(async (source: string, opts: { dir?: string; json?: boolean }) => {
      const dir = resolve(opts.dir ?? defaultModelsDir());
      const bar = progressBar('{bar} {percentage}% | {line}', opts.json === true);
      let started = false;
      let lastLine = 0;
      const { signal, off } = interruptSignal();
      try {
        const done = await downloadModel(source, {
          dir,
          signal,
          onProgress: (s) => {
            if (s.status === 'verifying') {
              bar?.stop();
              if (!opts.json) err('verifying the GGUF header…');
              return;
            }
            if (s.status !== 'downloading') return;
            if (bar) {
              if (!started) {
                started = true;
                if (s.resumedFrom > 0) err(`resuming at ${formatBytes(s.resumedFrom)}`);
                bar.start(s.total ?? 0, s.bytes, { line: downloadLine(s) });
              }
              if (s.total !== null) bar.setTotal(s.total);
              bar.update(s.bytes, { line: downloadLine(s) });
            } else if (!opts.json && Date.now() - lastLine > 5000) {
              lastLine = Date.now();
              err(downloadLine(s));
            }
          },
        });
        bar?.stop();
        if (opts.json) outJson(done);
        else out(`${done.dest} (${formatBytes(done.bytes)}) ready`);
      } catch (e) {
        bar?.stop();
        if (signal.aborted) err('download stopped; the partial file is kept, run the same command to resume');
        throw e;
      } finally {
        off();
      }
    });
}

/** `models add` / `remove`: folders and files the library references. */
function libraryEditCommands(models: Command): void {
  models
    .command('add')
    .description('add a folder or a GGUF file to the library (referenced in place, never copied)')
    .argument('<path>', 'folder or .gguf file')
    .option('--data-dir <dir>', 'data folder holding library.json')
    .action(async (path: string, opts: { dataDir?: string }) => {
      const lib = openCliServices(opts).library;
      const st = await stat(path).catch(ifMissing(null));
      const listing = st?.isDirectory() ? await lib.addFolder(path) : await lib.addFile(path);
      out(formatLibrary(listing.models, listing.invalid, listing.partials));
    });

  models
    .command('remove')
    .description('forget a folder or file added to the library (nothing is deleted)')
    .argument('<path>', 'folder or file')
    .option('--data-dir <dir>', 'data folder holding library.json')
    .action(async (path: string, opts: { dataDir?: string }) => {
      const listing = await openCliServices(opts).library.remove(path);
      out(formatLibrary(listing.models, listing.invalid, listing.partials));
    });
}
