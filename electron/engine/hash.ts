// Content hashes for cache keys. Pure JS (the engine imports no crypto module): two independent
// 64-bit FNV-1a passes over the UTF-16 code units, so accidental collisions are out of reach for
// cache-key use. Not a security hash.

const MASK = (1n << 64n) - 1n;
const PRIME = 0x100000001b3n;

function fnv1a64(text: string, offset: bigint): bigint {
  let h = offset;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * PRIME) & MASK;
  }
  return h;
}

/** 32 hex characters identifying `text`. */
export function contentHash(text: string): string {
  const a = fnv1a64(text, 0xcbf29ce484222325n);
  const b = fnv1a64(text, 0x84222325cbf29ce4n ^ BigInt(text.length));
  return a.toString(16).padStart(16, '0') + b.toString(16).padStart(16, '0');
}

/** JSON with object keys sorted, so equal values hash equally whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
}
