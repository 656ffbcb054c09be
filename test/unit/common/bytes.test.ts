// One byte formatter for every face (there were four, 1000- and 1024-based, all
// printing "GB"). Its units are binary and say so; the faces that print sizes use it (a lint
// rule, eslint.config.js byteFormatSyntax, proven in test/unit/lint/rules.test.ts).
import { describe, expect, it } from 'vitest';
import { formatBytes, formatParams } from '../../../electron/common/bytes';

describe('formatBytes', () => {
  it('prints binary units named as such', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(15.6 * 1024 ** 2)).toBe('15.6 MiB');
    expect(formatBytes(4.5 * 1024 ** 3)).toBe('4.5 GiB');
    // A "4.7 GB" file (decimal) is 4.4 GiB: one number per file, whichever face shows it.
    expect(formatBytes(4.7e9)).toBe('4.4 GiB');
    expect(formatBytes(1e15)).toBe('909.5 TiB');
    expect(formatBytes(null)).toBe('—');
    expect(formatBytes(Number.NaN)).toBe('—');
  });

  it('parameter counts stay decimal', () => {
    expect(formatParams(7.62e9)).toBe('7.6B');
    expect(formatParams(135e6)).toBe('135.0M');
    expect(formatParams(260_000)).toBe('260K');
    expect(formatParams(12)).toBe('12');
    expect(formatParams(null)).toBe('—');
  });
});
