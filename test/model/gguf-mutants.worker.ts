// Child process of gguf-mutants.test.ts: for each mutant of the base GGUF from index `from` on,
// writes it to a scratch file, inspects it as every face does (inspectModelFile) and, when that
// accepts it, loads it in node-llama-cpp and asks for two tokens. One JSON line per mutant on
// stdout ({i, id, outcome, message}); a mutant that crashes or freezes this process is one the
// parent names. Run as: node --import tsx gguf-mutants.worker.ts BASE FROM SCRATCH [SAMPLE]
// SAMPLE (a JSON {seed, every, always}) loads only some of the mutants the inspection accepts:
// those named in `always`, and those whose id hashes with `seed` to 0 modulo `every`; the others
// are reported 'inspected'. Every mutant is always inspected.
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, errorMessage } from '../../electron/common/errors';
import { inspectModelFile } from '../../electron/models/gguf';
import { loadLlamaBackend } from '../../electron/llama/load-backend';
import { ggufMutants } from '../helpers/gguf-mutants';

const [base, fromArg, scratch, sampleArg] = process.argv.slice(2) as [string, string, string, string | undefined];
const sample = sampleArg ? (JSON.parse(sampleArg) as { seed: number; every: number; always: string[] }) : null;
const loads = (id: string) => !sample || sample.always.includes(id) || createHash('sha256').update(`${sample.seed}:${id}`).digest().readUInt32LE(0) % sample.every === 0;
const mutants = ggufMutants(readFileSync(base));
const from = Number(fromArg);
const file = join(scratch, 'mutant.gguf');

for (let i = from; i < mutants.length; i++) {
  const m = mutants[i]!;
  // Announced first: if the process dies on this mutant, the parent knows which one.
  process.stdout.write(`${JSON.stringify({ i, id: m.id, outcome: 'started' })}\n`);
  writeFileSync(file, m.make());
  let outcome: 'refused' | 'loaded' | 'inspected' | 'threw';
  let message = '';
  try {
    await inspectModelFile(file);
    if (!loads(m.id)) {
      process.stdout.write(`${JSON.stringify({ i, id: m.id, outcome: 'inspected', message })}\n`);
      continue;
    }
    const backend = await loadLlamaBackend({ modelPath: file, threads: 1, sequences: 1, contextSize: 128 });
    try {
      await backend.generate([{ prompt: { system: '', user: 'Once upon a time' }, maxTokens: 2, temperature: 0 }]);
    } finally {
      await backend.dispose();
    }
    outcome = 'loaded';
  } catch (e) {
    outcome = e instanceof UserError ? 'refused' : 'threw';
    message = errorMessage(e);
  }
  process.stdout.write(`${JSON.stringify({ i, id: m.id, outcome, message })}\n`);
}
rmSync(file, { force: true });
process.stdout.write(`${JSON.stringify({ done: mutants.length })}\n`);
