// A view's reading of the experiments slice: its own kind only, typed as that kind.
import { useMemo } from 'react';
import type { ExperimentKind, ExperimentResult } from '../../../electron/common/contract/experiments';
import type { ExperimentOf } from './experimentsSlice';
import { useStore } from './index';

/** The history of one kind, newest first (null until loaded). */
export function useExperimentList<K extends ExperimentKind>(kind: K): ExperimentOf<K>[] | null {
  const all = useStore((s) => s.experiments);
  return useMemo(() => (all ? all.filter((e): e is ExperimentOf<K> => e.kind === kind) : null), [all, kind]);
}

/** An opened experiment's result, when it is of this kind. */
export function useExperimentResult<K extends ExperimentKind>(kind: K, id: string): ExperimentOf<K, ExperimentResult> | undefined {
  const r = useStore((s) => s.experimentResults[id]);
  return r?.kind === kind ? (r as ExperimentOf<K, ExperimentResult>) : undefined;
}
