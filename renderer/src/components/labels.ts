// One colour per label, by its position in the task's label order, shared by every chart.
const PALETTE = ['--l0', '--l1', '--l2', '--l3', '--l4', '--l5', '--l6', '--l7'];

export function labelVar(label: string | null, labels: readonly string[]): string {
  if (label === null) return 'var(--faint)';
  let i = labels.indexOf(label);
  if (i < 0) {
    // Math answers are free-form: hash them onto the palette so one answer keeps one colour.
    i = [...label].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  }
  return `var(${PALETTE[i % PALETTE.length]})`;
}

export function pct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || Number.isNaN(x) ? '–' : `${(x * 100).toFixed(digits)}%`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** An axis tick for a count: 700, 1.1k, 1.4k, 12k (whole thousands would print 1050 and 1400 both as "1k"). */
export function compactCount(v: number): string {
  if (Math.abs(v) < 1000) return String(v);
  const k = v / 1000;
  return `${Number(k.toFixed(Math.abs(k) < 10 ? 1 : 0))}k`;
}

/** "1 thread", "2 threads". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}

/**
 * A heat-map cell: a tint of `base` as strong as `strength` (0..1), text always in the page's own
 * colour, which holds 4.5:1 on every tint in both themes (the tint stops at half strength); null
 * is an empty cell.
 */
export function heatCell(strength: number | null, base = 'var(--ok)'): { background: string; color: string } {
  if (strength === null) return { background: 'var(--panel-2)', color: 'var(--muted)' };
  return { background: `color-mix(in srgb, ${base} ${Math.round(12 + Math.max(0, Math.min(1, strength)) * 38)}%, var(--panel))`, color: 'var(--text)' };
}
