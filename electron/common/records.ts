// Maps keyed by strings from outside (gold values, column names, labels from task files): a plain
// object answers `constructor`, `toString` or `__proto__` from its prototype, and `o['__proto__'] = x`
// replaces that prototype instead of storing x. These records have no prototype, are read by own
// keys only, and are validated by a schema that keeps every key (zod's z.record drops `__proto__`).
import { z } from 'zod';

/** An empty record with no prototype: every key, `__proto__` included, is an ordinary own key. */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A prototype-less record of `entries`. */
export function recordFrom<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const out = emptyRecord<T>();
  for (const [k, v] of entries) out[k] = v;
  return out;
}

/** `rec[key]` when it is the record's own key; never an inherited `constructor` or `toString`. */
export function own<T>(rec: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return rec != null && Object.prototype.hasOwnProperty.call(rec, key) ? rec[key] : undefined;
}

/**
 * A record schema that keeps every key of the JSON object it is given (`__proto__` included) and
 * gives a prototype-less record; values are checked with `value`.
 */
export function safeRecord<T extends z.ZodType>(value: T) {
  return z
    .custom<Record<string, z.input<T>>>((v) => v !== null && typeof v === 'object' && !Array.isArray(v), { message: 'expected an object' })
    .transform((v, ctx) => {
      const out = emptyRecord<z.output<T>>();
      for (const [k, x] of Object.entries(v)) {
        const r = value.safeParse(x);
        if (!r.success) {
          ctx.addIssue({ code: 'custom', message: `${k.length > 40 ? `${k.slice(0, 39)}…` : k}: ${r.error.issues[0]?.message ?? 'invalid'}`, path: [k] });
          return z.NEVER;
        }
        out[k] = r.data;
      }
      return out;
    });
}
