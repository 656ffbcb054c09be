// What Evaluate and Sweep ask for after the data steps (DataSteps.tsx): the task, a generator
// and an evaluator seeded from the saved settings, and a row limit; what both send of the
// label mapping; and how both list what they ran (a status chip, "generator → evaluator").
import type { JobStatus } from '../../../electron/common/contract/jobs';
import { ROW_LIMIT } from '../../../electron/common/settings';
import { ModelPicker } from './ModelPicker';
import { TaskSelect } from './TaskSelect';
import { useSeededField } from './seededFields';
import { modelLabel } from '../../../electron/common/model-spec';
import { useStore } from '../store';
import type { EvalDraft } from '../store/jobsSlice';

export interface ModelPair {
  generator: string;
  evaluator: string;
  setGenerator(v: string): void;
  setEvaluator(v: string): void;
  /** Both chosen. */
  chosen: boolean;
}

/**
 * The generator and evaluator fields, seeded from the saved settings (which come after the first
 * render) until the user changes them (seededFields.ts).
 */
export function useModelPair(): ModelPair {
  const settings = useStore((s) => s.settings);
  const [generator, setGenerator] = useSeededField(settings?.generator ?? '');
  const [evaluator, setEvaluator] = useSeededField(settings?.evaluator ?? settings?.generator ?? '');
  return { generator, evaluator, setGenerator, setEvaluator, chosen: generator.trim() !== '' && evaluator.trim() !== '' };
}

/** The task; a change re-reads the preview, whose label suggestions depend on it. */
export function TaskField({ testId }: { testId: string }) {
  const taskId = useStore((s) => s.currentTaskId);
  const setTask = useStore((s) => s.setCurrentTask);
  const hasPreview = useStore((s) => !!s.draft.preview);
  const previewData = useStore((s) => s.previewData);
  return (
    <TaskSelect
      value={taskId}
      onChange={(id) => {
        setTask(id);
        if (hasPreview) void previewData();
      }}
      testId={testId}
    />
  );
}

/** The task and the two models. */
export function TaskAndModels({ models, testIdPrefix }: { models: ModelPair; testIdPrefix: string }) {
  return (
    <div className="grid-3">
      <TaskField testId={`${testIdPrefix}-task`} />
      <ModelPicker label="Generator" value={models.generator} onChange={models.setGenerator} testId={`${testIdPrefix}-generator`} />
      <ModelPicker label="Evaluator" value={models.evaluator} onChange={models.setEvaluator} testId={`${testIdPrefix}-evaluator`} />
    </div>
  );
}

/** Rows a run over the draft's file will classify: the non-empty ones, up to the limit; null before a preview. */
export function chosenRows(draft: EvalDraft): number | null {
  const p = draft.preview;
  if (!p || p.rowCount === null) return null;
  return Math.max(0, Math.min(draft.limit ?? Infinity, p.rowCount - p.emptyInputs));
}

/** "Only the first rows": empty for all, else clamped to the bounds the API accepts. */
export function RowLimitField({ value, onChange, testId }: { value: number | null; onChange(v: number | null): void; testId: string }) {
  return (
    <label className="field">
      <span>Only the first rows</span>
      <input
        type="number"
        min={ROW_LIMIT.min}
        max={ROW_LIMIT.max}
        value={value ?? ''}
        placeholder="all"
        onChange={(e) => onChange(e.target.value ? Math.min(ROW_LIMIT.max, Math.max(ROW_LIMIT.min, Math.floor(Number(e.target.value)))) : null)}
        style={{ width: 100 }}
        data-testid={testId}
      />
    </label>
  );
}

/** What a job or a sweep is told of the data set-up (steps 1 and 2): the file, its columns, the mapped gold values. */
export function draftData(draft: EvalDraft & { inputColumn: string }): { dataPath: string; inputColumn: string; goldColumn: string | null; labelMap: Record<string, string> } {
  return { dataPath: draft.path, inputColumn: draft.inputColumn, goldColumn: draft.goldColumn, labelMap: chosenLabelMap(draft.labelMap) };
}

/** The gold values mapped to a label; "(unmapped: no gold)" choices are left out. */
export function chosenLabelMap(labelMap: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labelMap).filter(([, v]) => v));
}

/** Every status long work can be in: jobs, sweeps, comparisons and their pairs all say a job's words. */
/** A job's status, or a raced cell's `dropped`. */
type WorkStatus = JobStatus | 'dropped';

const STATUS_CHIP: Record<WorkStatus, string> = {
  queued: 'chip',
  running: 'chip run',
  paused: 'chip warn',
  interrupted: 'chip warn',
  cancelled: 'chip',
  done: 'chip ok',
  failed: 'chip bad',
  dropped: 'chip',
};

export function StatusChip({ status, testId, title }: { status: WorkStatus; testId: string; title?: string | null }) {
  return (
    <span className={STATUS_CHIP[status]} data-testid={testId} title={title ?? undefined}>
      {status}
    </span>
  );
}

/** "gen → eval", or one name when one model does both. */
export function modelPairText(generator: string, evaluator: string): string {
  return evaluator !== generator ? `${modelLabel(generator)} → ${modelLabel(evaluator)}` : modelLabel(generator);
}
