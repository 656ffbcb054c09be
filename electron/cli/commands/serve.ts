// `tatra serve`: browser mode. The same ApiHost as the desktop app, behind a token-guarded HTTP
// server; this is how the app runs on a headless GPU box (through an SSH tunnel) and how the
// end-to-end tests drive the real UI.
import { join } from 'node:path';
import type { Command } from 'commander';
import { createApiHost } from '../../api/host';
import { UserError } from '../../common/errors';
import { appRoot, resolveDataDir } from '../../paths';
import { THREADS_HELP } from '../../llama/threads';
import { intOption } from '../options';
import { err, onInterrupt, out } from '../ui';

interface ServeCliOptions {
  port: number;
  host: string;
  dataDir?: string;
  threads?: number;
  modelsDir: string[];
  allowOrigin: string[];
  staticDir?: string;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the app to a browser: the UI and its API on one token-guarded port')
    .option('--port <port>', 'port to listen on; 0 picks a free one', intOption('--port', 0, 65535), 5178)
    .option('--host <host>', 'interface to listen on (anything but loopback is reachable from the network)', '127.0.0.1')
    .option('--data-dir <dir>', 'data folder (jobs, user tasks, settings); default $TATRA_DATA_DIR or ~/.tatra-studio')
    .option('--threads <T>', THREADS_HELP, intOption('--threads', 1, 256))
    .option('--models-dir <dir>', 'extra folder of GGUF models (repeatable)', collect, [])
    .option('--allow-origin <origin>', 'extra origin allowed to call the API, e.g. a reverse proxy (repeatable)', collect, [])
    .option('--static-dir <dir>', 'folder of the built renderer (default dist/renderer)')
    .action(async (o: ServeCliOptions) => {
      for (const origin of o.allowOrigin) {
        if (!/^https?:\/\/[^/]+$/.test(origin)) throw new UserError(`--allow-origin must look like http://host:port, got "${origin}"`, 'bad_option');
      }
      const host = await createApiHost({
        dataDir: resolveDataDir(o.dataDir),
        threads: o.threads,
        modelsDirs: o.modelsDir,
        mode: 'browser',
      });
      let server;
      try {
        server = await (await import('../../server')).startServer({
          host,
          port: o.port,
          hostname: o.host,
          staticDir: o.staticDir ?? join(appRoot(), 'dist', 'renderer'),
          extraOrigins: o.allowOrigin,
        });
      } catch (e) {
        await host.dispose();
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new UserError(`port ${o.port} is in use; pick another with --port (0 picks a free one)`, 'port_in_use');
        if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UserError(`cannot listen on ${o.host}: no such interface`, 'bad_option');
        if (code === 'EACCES') throw new UserError(`not allowed to listen on port ${o.port}`, 'bad_option');
        throw e;
      }
      out(`TATRA Studio is serving at ${server.url}`);
      out(`port ${server.port}; data folder ${host.dataDir}; press Ctrl+C to stop`);
      await new Promise<void>((resolveStop) => {
        onInterrupt((signal) => {
          err(`tatra serve: ${signal}, shutting down`);
          void (async () => {
            await server.close();
            await host.dispose();
            resolveStop();
          })();
        }, ['SIGTERM']);
      });
      // node-llama-cpp and the job store are disposed by now; leave no native handle keeping us up.
      process.exit(0);
    });
}
