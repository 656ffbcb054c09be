// A job's row as the job_rows table holds it, and read back as a JobRow (JobStore, store.ts).
import type { StageName, StageStats } from '../common/tatra';
import { unpackText } from './stored-text';
import type { BaselineResult, JobRow, RowRun } from './types';

export interface RowDbRow {
  idx: number;
  line: number;
  input: string;
  gold: string | null;
  gold_raw: string | null;
  status: JobRow['status'];
  prediction: string | null;
  correct: number | null;
  lenient_correct: number | null;
  confidence: number | null;
  votes_json: string | null;
  tie_break: string | null;
  /** TEXT, or a Brotli BLOB (stored-text.ts). */
  runs_json: string | Buffer | null;
  baseline_json: string | null;
  /** TEXT, or a Brotli BLOB (from schema v10 on). */
  stages_json: string | Buffer | null;
  ms: number | null;
  error: string | null;
}

/** A row's columns without its runs and stage counts (read as NULL): what a table of rows shows. */
export const SUMMARY_COLUMNS = 'idx, line, input, gold, gold_raw, status, prediction, correct, lenient_correct, confidence, votes_json, tie_break, NULL AS runs_json, baseline_json, NULL AS stages_json, ms, error';

export function parseJson<T>(s: string | null): T | null {
  return s === null ? null : (JSON.parse(s) as T);
}

function bool(v: number | null): boolean | null {
  return v === null ? null : v !== 0;
}

export function toRow(r: RowDbRow, runs: RowRun[] | null): JobRow {
  return {
    index: r.idx,
    line: r.line,
    input: r.input,
    gold: r.gold,
    goldRaw: r.gold_raw,
    status: r.status,
    prediction: r.prediction,
    correct: bool(r.correct),
    lenientCorrect: bool(r.lenient_correct),
    confidence: r.confidence,
    votes: parseJson<Record<string, number>>(r.votes_json),
    tieBreak: r.tie_break,
    runs,
    baseline: parseJson<BaselineResult>(r.baseline_json),
    stages: parseJson<Record<StageName, StageStats>>(unpackText(r.stages_json)),
    ms: r.ms,
    error: r.error,
  };
}
