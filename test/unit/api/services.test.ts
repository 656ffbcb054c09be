// The composition root (electron/api/services.ts) on a real data folder: opening it touches
// nothing; the database opens on first use, once, for the jobs, sweeps and comparisons alike;
// a face that serves a page resolves tasks by id only, the CLI by id or file; disposing closes
// the database so another process (or a second opening) can have it.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openServices } from '../../../electron/api/services';
import { openCliServices } from '../../../electron/cli/session';
import type { Experiments } from '../../../electron/experiments';
import type { JobManager } from '../../../electron/jobs';

const dir = mkdtempSync(join(tmpdir(), 'tatra-services-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openServices', () => {
  it('opens nothing until used, then one database for jobs, sweeps and comparisons, closed on dispose', async () => {
    const dataDir = join(dir, 'lazy');
    const opened: { jobs: JobManager[]; experiments: Experiments[] } = { jobs: [], experiments: [] };
    const services = openServices({ dataDir, onOpen: { jobs: (m) => void opened.jobs.push(m), experiments: (m) => void opened.experiments.push(m) } });
    expect(services.dataDir).toBe(dataDir);
    expect((await services.tasks.list()).length).toBeGreaterThan(0);
    expect(existsSync(dataDir)).toBe(false);

    const experiments = services.experiments();
    expect(existsSync(join(dataDir, 'tatra.db'))).toBe(true);
    expect(services.experiments()).toBe(experiments);
    expect(services.jobs()).toBe(opened.jobs[0]);
    expect(opened.jobs).toHaveLength(1);
    expect(opened.experiments).toEqual([experiments]);
    expect(experiments.list('sweep')).toEqual([]);
    expect(experiments.list('compare')).toEqual([]);
    const store = services.jobStore();
    expect(services.jobStore()).toBe(store);

    await services.dispose();
    expect(store.db.open).toBe(false);
    await services.dispose();
  });

  it('closes in the reverse order of opening: what listens first, the database last', async () => {
    const order: string[] = [];
    const services = openServices({
      dataDir: join(dir, 'order'),
      onOpen: {
        jobs: () => () => void order.push(`jobs listener off, database ${services.jobStore().db.open ? 'open' : 'closed'}`),
        experiments: () => () => void order.push('experiments listener off'),
      },
    });
    services.experiments();
    const store = services.jobStore();
    await services.dispose();
    // The host's forwards used to be dropped: never called, they outlived the services.
    expect(order).toEqual(['experiments listener off', 'jobs listener off, database open']);
    expect(store.db.open).toBe(false);
  });

  it('a face serving a page names tasks by id only; the CLI by id or task file', async () => {
    const file = join(dir, 'mine.json');
    const sst2 = (await openServices({ dataDir: join(dir, 'tasks') }).tasks.find('sst2')).task;
    writeFileSync(file, JSON.stringify({ ...sst2, id: 'mine', name: 'Mine' }));
    const page = openServices({ dataDir: join(dir, 'tasks') });
    await expect(page.tasks.resolve(file)).rejects.toMatchObject({ code: 'task_unknown' });
    expect((await page.tasks.resolve('sst2')).id).toBe('sst2');
    const cli = openCliServices({ dataDir: join(dir, 'tasks') });
    expect((await cli.tasks.resolve(file)).id).toBe('mine');

    // Saved by one face, found by the other: one task folder per data folder.
    await page.tasks.save({ ...sst2, id: 'saved' });
    expect(JSON.parse(readFileSync(join(cli.tasks.userDir, 'saved.json'), 'utf8')).id).toBe('saved');
    expect((await cli.tasks.resolve('saved')).id).toBe('saved');
    await expect(page.tasks.save(sst2)).rejects.toMatchObject({ code: 'task_reserved' });
    expect(await page.tasks.delete('saved')).toBe(true);
    await cli.close();
  });
});
