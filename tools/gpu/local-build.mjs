// Runs on the far side (plain node, inside the unpacked app): the name node-llama-cpp gives a local
// build of the given GPU type, computed with node-llama-cpp's own functions, so that getLlama({gpu:
// "auto", build: "never"}) finds the addon compiled by far-side.sh exactly where it looks first.
//
//   node local-build.mjs <app> name <cuda|cpu>           prints {"folder","binVariant"} as JSON
//   node local-build.mjs <app> install <cuda|cpu> <dir>  copies <dir>/* (llama-addon.node and its
//                                                        libraries) into localBuilds/<folder>/Release
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [app, verb, kind, dir] = process.argv.slice(2);
if (!app || !['name', 'install'].includes(verb ?? '') || !['cuda', 'cpu'].includes(kind ?? '') || (verb === 'install' && !dir)) {
  process.stderr.write('usage: node local-build.mjs <app> name|install <cuda|cpu> [dir]\n');
  process.exit(2);
}
const nlc = resolve(app, 'node_modules', 'node-llama-cpp', 'dist');
const load = (p) => import(pathToFileURL(join(nlc, p)).href);
const [{ getBuildFolderNameForBuildOptions }, { resolveCustomCmakeOptions }, { getPlatform }, { getPlatformInfo }, { getClonedLlamaCppRepoReleaseInfo }, config, { builtinLlamaCppRelease }, { convertBuildOptionsToBuildOptionsJSON }] =
  await Promise.all([
    load('bindings/utils/getBuildFolderNameForBuildOptions.js'),
    load('bindings/utils/resolveCustomCmakeOptions.js'),
    load('bindings/utils/getPlatform.js'),
    load('bindings/utils/getPlatformInfo.js'),
    load('bindings/utils/cloneLlamaCppRepo.js'),
    load('config.js'),
    load('bindings/utils/binariesGithubRelease.js'),
    load('bindings/types.js'),
  ]);

// The same object getLlamaForOptions builds (node-llama-cpp 3.21: bindings/getLlama.js).
const cloned = await getClonedLlamaCppRepoReleaseInfo();
const buildOptions = {
  customCmakeOptions: resolveCustomCmakeOptions({}),
  progressLogs: false,
  platform: getPlatform(),
  platformInfo: await getPlatformInfo(),
  arch: process.arch,
  gpu: kind === 'cuda' ? 'cuda' : false,
  llamaCpp: { repo: cloned?.llamaCppGithubRepo ?? config.builtinLlamaCppGitHubRepo, release: cloned?.tag ?? builtinLlamaCppRelease },
};
const name = await getBuildFolderNameForBuildOptions(buildOptions);
if (verb === 'name') {
  process.stdout.write(`${JSON.stringify({ folder: name.withCustomCmakeOptions, binVariant: name.binVariant })}\n`);
} else {
  const folder = join(config.llamaLocalBuildBinsDirectory, name.withCustomCmakeOptions);
  await rm(folder, { recursive: true, force: true });
  await mkdir(join(folder, 'Release'), { recursive: true });
  await cp(resolve(dir), join(folder, 'Release'), { recursive: true });
  await writeFile(join(folder, 'Release', config.buildMetadataFileName), JSON.stringify({ buildOptions: convertBuildOptionsToBuildOptionsJSON(buildOptions) }));
  await writeFile(join(folder, 'buildDone.status'), '');
  process.stdout.write(`${folder}\n`);
}
