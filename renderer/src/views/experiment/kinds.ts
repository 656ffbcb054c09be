// The experiment page's kinds: what one kind plugs into the one page (ExperimentView.tsx), the
// same skeleton for every kind: the set-up's own fields and what Start sends, the history's
// columns, the detail's heading and its result (tables and charts). A new kind, or a new part of a
// kind's result (intervals, paired comparisons, a race's dropped cells), is added in its file here.
import type { ComponentType, ReactNode } from 'react';
import type { ExperimentKind, ExperimentResult, ExperimentStartInput } from '../../../../electron/common/contract/experiments';
import type { HistoryColumn } from '../../components/WorkProgress';
import type { RunPlanProps } from '../../components/RunPlan';
import type { ExperimentOf } from '../../store/experimentsSlice';
import { comparePage } from './compare';
import { sweepPage } from './sweep';

/** What a kind's set-up adds to the shared steps (the data file, its columns, the budget, the plan, Start). */
export interface SetupParts<K extends ExperimentKind> {
  /** Beside the card's title: what the form makes (the grid's jobs, the pairs). */
  shape: ReactNode;
  /** The kind's own fields: the task, the models, the grid or the settings. */
  fields: ReactNode;
  /** What is wrong with the fields, when something is (said above Start). */
  problem?: ReactNode;
  /** What Start sends, and the plan beside it prices (the budget aside); null until the fields are complete. */
  spec: Extract<ExperimentStartInput, { kind: K }>['spec'] | null;
  /** The model calls the plan beside Start counts until the host's plan comes. */
  calls: Pick<RunPlanProps, 'settings' | 'times' | 'cells'>;
}

export type ResultOfKind<K extends ExperimentKind> = ExperimentOf<K, ExperimentResult>;

export interface ExperimentPage<K extends ExperimentKind> {
  kind: K;
  /** "sweep", "comparison"; its plural heads the history. */
  noun: string;
  nouns: string;
  /** What a cell is called: a sweep's jobs, a comparison's pairs. */
  cellNoun: string;
  /** The list page's heading and what the kind is for. */
  title: string;
  intro: string;
  /** The set-up card's title and its Start button. */
  setupTitle: string;
  start: string;
  budgetPlaceholder: string;
  /** The kind's set-up (a hook: its fields keep their own state). */
  useSetup(): SetupParts<K>;
  /** The history: an item's name and the kind's columns. */
  historyName(item: ExperimentOf<K>): ReactNode;
  historyColumns: HistoryColumn<ExperimentOf<K>>[];
  /** The detail page's heading and the line under it (the status follows it). */
  heading(result: ResultOfKind<K>): ReactNode;
  subtitle(result: ResultOfKind<K>): ReactNode;
  /** The result so far: tables and charts. */
  Result: ComponentType<{ result: ResultOfKind<K> }>;
}

/** Every kind's page, registered once. */
export const EXPERIMENT_PAGES: { [K in ExperimentKind]: ExperimentPage<K> } = {
  sweep: sweepPage,
  compare: comparePage,
};
