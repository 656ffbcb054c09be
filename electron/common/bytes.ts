// One way to print a byte count on every face (CLI, app, error messages). Binary units, named as
// such (KiB, MiB, GiB): these numbers are compared with RAM and VRAM, which the OS reports in
// powers of two; printing 1000-based and 1024-based values both as "GB" showed two different
// numbers for one file. Parameter counts are decimal (7.6B), as model cards name them.
// common/: no Node, no DOM; the renderer uses these too.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  let v = Math.max(0, n);
  let unit = 0;
  while (v >= 1024 && unit < UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  return unit === 0 ? `${v} B` : `${v.toFixed(1)} ${UNITS[unit]}`;
}

/** A parameter count (7.6B, 135.0M, 260K): decimal, as model cards name them. */
export function formatParams(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}K`;
  return String(n);
}
