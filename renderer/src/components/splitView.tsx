// A view (or a part of one) whose script is fetched apart from the page's first script.
import { lazy, useState, type ComponentType, type ReactElement } from 'react';

/**
 * A view whose script is fetched apart. Once the script has come (prefetched, or its view opened
 * before), the view renders at once; a React.lazy component would suspend on its first render
 * whatever its script's state, and React holds a fallback it shows for at least 300 ms, which was
 * a third of a job page's opening. A mount keeps the component it started with, so a view opened
 * while its script was on its way is not remounted when it comes.
 */
export function splitView<P extends object>(load: () => Promise<ComponentType<P>>): { View: (props: P) => ReactElement; fetch: () => Promise<unknown> } {
  let ready: ComponentType<P> | null = null;
  const fetch = () =>
    load().then((c) => {
      ready = c;
      return c;
    });
  const Lazy = lazy(() => fetch().then((c) => ({ default: c })));
  function View(props: P): ReactElement {
    const [Loaded] = useState(() => ready);
    return Loaded ? <Loaded {...props} /> : <Lazy {...props} />;
  }
  return { View, fetch };
}
