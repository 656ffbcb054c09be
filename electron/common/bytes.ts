// One way to print a byte count on every face (CLI, app, error messages). Binary units, named as
// such (KiB, MiB, GiB): these numbers are compared with RAM and VRAM, which the OS reports in
// powers of two; printing 1000-based and 1024-based values both as "GB" showed two different
// numbers for one file.
// common/: no Node, no DOM.

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
