// `tatra models`: the model library (list, info with a fit estimate, add/remove folders and files),
// the curated catalog, and verified, resumable downloads with a progress bar. Thin: the work is in
// electron/models.
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import type { DownloadState, FitEstimate, InvalidModel, ModelEntry, PartialDownload } from '../../common/contract/models';
import { disposeLlamaRuntime } from '../../llama';
import { ModelLibrary, downloadModel, estimateFit, hardwareInfo, inspectModelFile, invalidReason, loadCatalog, scanLibrary, validateModelFile } from '../../models';
import { defaultModelsDir, resolveDataDir } from '../../paths';
import { intOption } from '../options';
import { remoteHealth, type RemoteHealth } from '../../models/remote-health';
import { RemoteLibrary } from '../../models/remote-library';
import { normaliseBaseUrl, remoteLabel } from '../../common/remote';
import { UserError } from '../../common/errors';
import { formatBytes, formatParams } from '../../common/bytes';


function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '…';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function table(rows: string[][], right: (c: number) => boolean): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (right(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n');
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
  const rows = [['remote', 'model', 'kind', 'version', 'context', 'constrained', 'endpoint', 'health']];
  for (const r of remotes) {
    r.endpoints.forEach((e, i) => {
      const first = i === 0;
      rows.push([
        first ? remoteLabel(r.entry) : '',
        first ? r.entry.model : '',
        first ? (e.probe?.kind ?? r.entry.kind ?? '—') : '',
        first ? (e.probe?.version ?? '—') : '',
        first ? (e.probe?.contextLength?.toLocaleString('en-US') ?? '—') : '',
        first ? (e.probe?.constrained ?? '—') : '',
        e.url,
        e.up ? 'up' : `DOWN: ${e.error ?? 'no answer'}`,
      ]);
    });
  }
  return table(rows, (c) => c === 4);
}

export function formatFit(f: FitEstimate): string {
  const lines = [
    `memory needed  ${formatBytes(f.totalBytes)} (${formatBytes(f.modelBytes)} weights + ${formatBytes(f.contextBytes)} for ${f.contextSize} tokens × ${f.sequences} sequence${f.sequences === 1 ? '' : 's'})`,
    `plan           ${f.plan === 'cpu' ? 'CPU only' : f.plan === 'gpu' ? `all ${f.totalLayers} layers on the GPU` : `${f.gpuLayers} of ${f.totalLayers} layers on the GPU, the rest on the CPU`}: ${formatBytes(f.ramBytes)} RAM${f.vramBytes > 0 ? ` + ${formatBytes(f.vramBytes)} VRAM` : ''}`,
    `available      ${formatBytes(f.ramFree)} RAM free${f.vramFree > 0 ? `, ${formatBytes(f.vramFree)} VRAM free` : ''}`,
    `fits           ${f.fits ? 'yes' : 'NO'}`,
  ];
  if (f.warning) lines.push(`warning        ${f.warning}`);
  return lines.join('\n');
}

function downloadLine(s: DownloadState): string {
  const total = s.total !== null ? ` of ${formatBytes(s.total)}` : '';
  return `${formatBytes(s.bytes)}${total}  ${formatBytes(s.rate)}/s  ETA ${formatDuration(s.etaSeconds)}`;
}

export function registerModels(program: Command): void {
  const models = program.command('models').description('the model library, hardware fit, the catalog and downloads');

  models
    .command('list')
    .description('list GGUF models (the library: models/ plus added folders and files; or only the folders given)')
    .argument('[folders...]', 'folders to scan instead of the library')
    .option('--data-dir <dir>', 'data folder holding library.json (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--json', 'print JSON')
    .action(async (folders: string[], opts: { dataDir?: string; json?: boolean }) => {
      let listing;
      if (folders.length > 0) {
        // An argument may also be a single file.
        const dirs: string[] = [];
        const files: string[] = [];
        for (const f of folders) ((await stat(f).catch(() => null))?.isFile() ? files : dirs).push(f);
        listing = await scanLibrary(dirs, files);
        if (opts.json) process.stdout.write(`${JSON.stringify(listing)}\n`);
        else process.stdout.write(`${formatLibrary(listing.models, listing.invalid, listing.partials)}\n`);
        return;
      }
      const dataDir = resolveDataDir(opts.dataDir);
      listing = await new ModelLibrary(dataDir).list();
      // Remote entries with their health, probed now (each endpoint within a few seconds).
      const remotes = await remoteHealth(await new RemoteLibrary(dataDir).list(), { env: process.env });
      if (opts.json) process.stdout.write(`${JSON.stringify({ ...listing, remotes })}\n`);
      else process.stdout.write(`${formatLibrary(listing.models, listing.invalid, listing.partials)}${remotes.length > 0 ? `\n\n${formatRemotes(remotes)}` : ''}\n`);
    });

  models
    .command('add-remote')
    .description('add a remote model (an OpenAI-compatible server: vLLM, llama-server, Ollama, LM Studio, OpenAI), used as remote:NAME')
    .argument('<name>', 'the name to use it by (remote:NAME)')
    .requiredOption('--url <url>', 'the server\'s OpenAI API root, e.g. http://gpu1:8000/v1; repeat for replicas of the same model', (v: string, acc: string[] = []) => [...acc, v])
    .requiredOption('--model <id>', 'the model id on the server')
    .option('--key-env <VAR>', 'environment variable holding the API key (the key itself is never stored by the CLI)')
    .option('--no-probe', 'add without asking the server (it may be down now)')
    .option('--data-dir <dir>', 'data folder holding the library')
    .action(async (name: string, opts: { url: string[]; model: string; keyEnv?: string; probe: boolean; dataDir?: string }) => {
      const lib = new RemoteLibrary(resolveDataDir(opts.dataDir));
      const input = { name, urls: opts.url.map(normaliseBaseUrl), model: opts.model, ...(opts.keyEnv ? { keyEnv: opts.keyEnv } : {}) };
      let health: RemoteHealth | undefined;
      if (opts.probe) {
        if (opts.keyEnv && !process.env[opts.keyEnv]) throw new UserError(`$${opts.keyEnv} is not set; export the API key in it first (or add with --no-probe)`, 'remote_key_missing');
        // Probed before it is saved: a wrong key, an unknown model or a server that is not
        // OpenAI-compatible is refused; a server that is merely down now is kept, with a note.
        [health] = await remoteHealth([{ ...input }], { env: process.env });
        const refused = health?.endpoints.find((e) => !e.up && !/^cannot reach /.test(e.error ?? ''));
        if (refused) throw new UserError(refused.error ?? `${refused.url} refused`, 'remote_refused');
      }
      const entry = await lib.add(input);
      if (!health) {
        process.stdout.write(`added remote:${entry.name} (not probed)\n`);
        return;
      }
      process.stdout.write(`added remote:${entry.name}\n\n${formatRemotes([{ ...health, entry }])}\n`);
      if (health.endpoints.every((e) => !e.up)) process.stderr.write(`note: no endpoint of remote:${entry.name} answers now; it is kept and will be used once it does\n`);
    });

  models
    .command('remove-remote')
    .description('forget a remote model (and any key typed for it)')
    .argument('<name>', 'its name')
    .option('--data-dir <dir>', 'data folder holding the library')
    .action(async (name: string, opts: { dataDir?: string }) => {
      await new RemoteLibrary(resolveDataDir(opts.dataDir)).remove(name.replace(/^remote:/, ''));
      process.stdout.write(`removed remote:${name.replace(/^remote:/, '')}\n`);
    });

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
        const [fit, hw] = await Promise.all([estimateFit(path, { contextSize: opts.contextSize, sequences: opts.sequences }), hardwareInfo()]);
        if (problem !== null) {
          // Exit 2 says something is wrong; stderr says what, last (stdout still gets the description).
          process.exitCode = 2;
          process.stderr.write(`tatra: ${path} is not usable: ${problem}\n`);
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ model, usable: problem === null, problem, fit, hardware: hw })}\n`);
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
          ['hardware', `${hw.gpu === 'cpu' ? 'CPU only' : `${hw.gpu}: ${hw.gpuDevices.join(', ') || 'GPU'}`}, ${hw.cpuCores} cores, ${formatBytes(hw.ram.total)} RAM`],
        ];
        process.stdout.write(`${table(rows, () => false)}\n\n${formatFit(fit)}\n`);
      } finally {
        await disposeLlamaRuntime();
      }
    });

  models
    .command('catalog')
    .description('the curated models that `tatra models download <id>` can fetch')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const catalog = await loadCatalog();
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(catalog)}\n`);
        return;
      }
      process.stdout.write(
        `${table(
          [['id', 'model', 'quant', 'size', 'paper', 'uri'], ...catalog.map((c) => [c.id, c.name, c.quantization, `~${formatBytes(c.sizeBytes)}`, c.paper ? 'yes' : '', c.uri])],
          (c) => c === 3,
        )}\n`,
      );
    });

  models
    .command('download')
    .description('download a model (catalog id, hf:user/repo/file.gguf, hf:user/repo:QUANT or an https URL); resumable, verified')
    .argument('<source>', 'catalog id, hf: URI or https URL')
    .option('--dir <dir>', 'folder to put it in (default: the models/ folder)')
    .option('--json', 'print the final state as JSON')
    .action(async (source: string, opts: { dir?: string; json?: boolean }) => {
      const dir = resolve(opts.dir ?? defaultModelsDir());
      const tty = process.stderr.isTTY === true && !opts.json;
      const bar = tty
        ? new cliProgress.SingleBar(
            { format: '{bar} {percentage}% | {line}', stream: process.stderr, hideCursor: true, clearOnComplete: false },
            cliProgress.Presets.shades_classic,
          )
        : null;
      let started = false;
      let lastLine = 0;
      const ac = new AbortController();
      const onSigint = () => ac.abort();
      process.once('SIGINT', onSigint);
      try {
        const done = await downloadModel(source, {
          dir,
          signal: ac.signal,
          onProgress: (s) => {
            if (s.status === 'verifying') {
              bar?.stop();
              if (!opts.json) process.stderr.write('verifying the GGUF header…\n');
              return;
            }
            if (s.status !== 'downloading') return;
            if (bar) {
              if (!started) {
                started = true;
                if (s.resumedFrom > 0) process.stderr.write(`resuming at ${formatBytes(s.resumedFrom)}\n`);
                bar.start(s.total ?? 0, s.bytes, { line: downloadLine(s) });
              }
              if (s.total !== null) bar.setTotal(s.total);
              bar.update(s.bytes, { line: downloadLine(s) });
            } else if (!opts.json && Date.now() - lastLine > 5000) {
              lastLine = Date.now();
              process.stderr.write(`${downloadLine(s)}\n`);
            }
          },
        });
        bar?.stop();
        if (opts.json) process.stdout.write(`${JSON.stringify(done)}\n`);
        else process.stdout.write(`${done.dest} (${formatBytes(done.bytes)}) ready\n`);
      } catch (e) {
        bar?.stop();
        if (ac.signal.aborted) process.stderr.write('download stopped; the partial file is kept, run the same command to resume\n');
        throw e;
      } finally {
        process.off('SIGINT', onSigint);
      }
    });

  models
    .command('add')
    .description('add a folder or a GGUF file to the library (referenced in place, never copied)')
    .argument('<path>', 'folder or .gguf file')
    .option('--data-dir <dir>', 'data folder holding library.json')
    .action(async (path: string, opts: { dataDir?: string }) => {
      const lib = new ModelLibrary(resolveDataDir(opts.dataDir));
      const st = await stat(path).catch(() => null);
      const listing = st?.isDirectory() ? await lib.addFolder(path) : await lib.addFile(path);
      process.stdout.write(`${formatLibrary(listing.models, listing.invalid, listing.partials)}\n`);
    });

  models
    .command('remove')
    .description('forget a folder or file added to the library (nothing is deleted)')
    .argument('<path>', 'folder or file')
    .option('--data-dir <dir>', 'data folder holding library.json')
    .action(async (path: string, opts: { dataDir?: string }) => {
      const listing = await new ModelLibrary(resolveDataDir(opts.dataDir)).remove(path);
      process.stdout.write(`${formatLibrary(listing.models, listing.invalid, listing.partials)}\n`);
    });
}
