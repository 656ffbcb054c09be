// Form fields that start from values which may arrive after the first render (the saved settings,
// a run the host restores after a reload). Derived, not copied: a field shows its seed until the
// user changes it, and from then on the user's value, so a late seed can never overwrite what was
// typed (copying the seed into state during render did, and set state while rendering).
import { useCallback, useMemo, useState } from 'react';

/** One field: `seed` until the user sets it, then the user's value whatever `seed` does. */
export function useSeededField<T>(seed: T): [T, (value: T) => void] {
  const [own, setOwn] = useState<{ value: T } | null>(null);
  const set = useCallback((value: T) => setOwn({ value }), []);
  return [own ? own.value : seed, set];
}

/** An object of fields (the run settings), seeded field by field: only the fields the user changed keep the user's value. */
export function useSeededFields<T extends object>(seed: T): [T, (value: T) => void] {
  const [edits, setEdits] = useState<Partial<T>>({});
  const value = useMemo(() => ({ ...seed, ...edits }), [seed, edits]);
  const set = useCallback(
    (next: T) =>
      setEdits((prev) => {
        const changed = { ...prev };
        for (const key of Object.keys(next) as (keyof T)[]) if (next[key] !== value[key]) changed[key] = next[key];
        return changed;
      }),
    [value],
  );
  return [value, set];
}
