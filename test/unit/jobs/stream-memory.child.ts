// Run by stream-memory.test.ts in a child with --expose-gc: streams a big data file through
// readDataset, forcing GC while it samples the heap, and prints what it saw as JSON.
import { readDataset } from '../../../electron/jobs/dataset';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const path = process.argv[2]!;
const jsonl = path.endsWith('.jsonl');
gc();
const base = process.memoryUsage().heapUsed;
let maxGrowth = 0;
let rows = 0;
let chars = 0;
let lastLine = 0;
const mapping = jsonl ? { textColumn: 'input', labelColumn: 'solution' } : { textColumn: 'text', labelColumn: 'label', labelMap: { '0': 'negative', '1': 'positive' } };
for await (const row of readDataset(path, mapping)) {
  rows++;
  chars += row.input.length;
  lastLine = row.line;
  if (rows % 5000 === 0) {
    gc();
    maxGrowth = Math.max(maxGrowth, process.memoryUsage().heapUsed - base);
  }
}
gc();
maxGrowth = Math.max(maxGrowth, process.memoryUsage().heapUsed - base);
process.stdout.write(JSON.stringify({ rows, chars, lastLine, maxGrowthBytes: maxGrowth }) + '\n');
