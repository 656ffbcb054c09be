// electron-builder.yml cannot be exercised here (packaging needs Electron's binary, which cannot
// be downloaded), so this checks what can be: electron-builder's own loader reads it and its own
// schema validation accepts it, and the node-llama-cpp packaging rules are in place.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const require = createRequire(join(root, 'package.json'));

interface BuilderConfig {
  appId?: string;
  productName?: string;
  asar?: boolean;
  files?: (string | { filter?: string[] })[];
  asarUnpack?: string[];
  linux?: { target?: { target: string }[] };
  mac?: { target?: { target: string; arch: string[] }[] };
  win?: { target?: { target: string }[] };
}

type ConfigModule = {
  getConfig(projectDir: string, configPath: string | null, fromOptions: null): Promise<BuilderConfig>;
  validateConfiguration(config: BuilderConfig, logger: unknown): Promise<void>;
};

function loadBuilder(): { config: ConfigModule; logger: unknown } | null {
  try {
    // Internal modules of electron-builder (a dev dependency); the test names them so a version
    // that moves them fails loudly here rather than silently skipping validation.
    const config = require('app-builder-lib/out/util/config/config') as ConfigModule;
    const { DebugLogger } = require('builder-util/out/DebugLogger') as { DebugLogger: new (enabled: boolean) => unknown };
    return { config, logger: new DebugLogger(false) };
  } catch {
    return null;
  }
}

describe('electron-builder.yml', () => {
  const builder = loadBuilder();

  it('loads electron-builder to validate with', () => {
    expect(builder, 'app-builder-lib/builder-util internals not found: update this test for the installed electron-builder').not.toBeNull();
  });

  it('passes electron-builder schema validation and carries node-llama-cpp packaging rules', async () => {
    const { config: mod, logger } = builder!;
    const config = await mod.getConfig(root, join(root, 'electron-builder.yml'), null);
    await expect(mod.validateConfiguration(config, logger)).resolves.toBeUndefined();

    expect(config.productName).toBe('TATRA Studio');
    expect(config.appId).toMatch(/\w+\.\w+/);
    expect(config.asar).toBe(true);
    // getConfig normalises `files` into [{filter: [...]}]; flatten either form.
    const files = (config.files ?? []).flatMap((f) => (typeof f === 'string' ? [f] : (f.filter ?? [])));
    // Only the target platform's node-llama-cpp binaries, everything else excluded first.
    expect(files).toContain('!node_modules/node-llama-cpp/bins/**/*');
    expect(files).toContain('node_modules/node-llama-cpp/bins/${os}-${arch}*/**/*');
    expect(files).toContain('!node_modules/@node-llama-cpp/*/bins/**/*');
    expect(files).toContain('node_modules/@node-llama-cpp/${os}-${arch}*/bins/**/*');
    expect(files.indexOf('!node_modules/node-llama-cpp/bins/**/*')).toBeLessThan(files.indexOf('node_modules/node-llama-cpp/bins/${os}-${arch}*/**/*'));
    for (const needed of ['package.json', 'tasks/**/*', 'models/catalog.json', 'dist/electron/**/*', 'dist/renderer/**/*']) expect(files).toContain(needed);
    // Native code must live outside the asar archive.
    expect(config.asarUnpack).toEqual(
      expect.arrayContaining(['node_modules/node-llama-cpp/bins', 'node_modules/@node-llama-cpp/*', 'node_modules/better-sqlite3/build/Release/*.node']),
    );
    expect(config.linux?.target?.map((t) => t.target)).toEqual(['AppImage', 'deb']);
    expect(config.mac?.target?.map((t) => t.target)).toEqual(['dmg']);
    expect(config.mac?.target?.[0]?.arch).toEqual(['arm64', 'x64']);
    expect(config.win?.target?.map((t) => t.target)).toEqual(['nsis']);
  });

  it('packs the entry points that package.json and main.ts name', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string };
    expect(pkg.main).toBe('dist/electron/main.js');
    const build = readFileSync(join(root, 'scripts/build-node.mjs'), 'utf8');
    // main.ts loads preload.cjs from its own folder; the build must put it there.
    expect(build).toContain("outfile: 'dist/electron/preload.cjs'");
    expect(build).toContain("outdir: 'dist/electron'");
  });

  it('is refused by the same validation when broken (the check has teeth)', async () => {
    const { config: mod, logger } = builder!;
    const config = await mod.getConfig(root, join(root, 'electron-builder.yml'), null);
    await expect(mod.validateConfiguration({ ...config, asarUnpacks: ['x'] } as BuilderConfig, logger)).rejects.toThrow(/Invalid configuration/);
  });
});
