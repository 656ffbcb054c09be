// What can wait for the page's first paint: a page of a job mounts its charts' drawings and its
// rows table just after its numbers are on screen, in a transition, rather than in the same
// render (the charting library's layout and SVG, and a virtual table's measurements of every row,
// were most of that render at 100,000 rows).
import { startTransition, useEffect, useState } from 'react';

/**
 * False until the first paint once `ready` (default: at once), then true for good: a frame, then a
 * task, then a transition.
 */
export function useAfterFirstPaint(ready = true): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    if (!ready || painted) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => startTransition(() => setPainted(true)), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [ready, painted]);
  return painted;
}
