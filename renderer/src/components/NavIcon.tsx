// One small line icon per view, for the sidebar (beside the name, or alone when it is collapsed
// to a rail). Drawn in the text colour, hidden from assistive technology: the button has a name.
import type { ViewName } from '../store/uiSlice';

const PATHS: Record<ViewName, string> = {
  // A list of lines: the tasks.
  tasks: 'M8 5h9M8 10h9M8 15h9M3.5 5h.5M3.5 10h.5M3.5 15h.5',
  // A tag: one input, one label.
  classify: 'M3 3h7l7 7-7 7-7-7zM7 7h.01',
  // A tick in a box: how often it is right.
  evaluate: 'M3 3h14v14H3zM6.5 10l2.5 2.5 4.5-5',
  // A cube: a model file.
  models: 'M10 2l7 4v8l-7 4-7-4V6zM3 6l7 4 7-4M10 10v8',
  // Two columns side by side.
  compare: 'M3 4h5v12H3zM12 4h5v12h-5z',
  // A grid of points: settings swept.
  sweep: 'M4 4h.01M10 4h.01M16 4h.01M4 10h.01M10 10h.01M16 10h.01M4 16h.01M10 16h.01M16 16h.01',
};

export function NavIcon({ view }: { view: ViewName }) {
  return (
    <svg className="nav-icon" width="18" height="18" viewBox="0 0 20 20" fill="none" stroke="currentColor" strokeWidth={view === 'sweep' ? 3 : 1.6} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={PATHS[view]} />
    </svg>
  );
}
