// Option parsers shared by every command: they turn bad numbers into one clear UserError line.
import { UserError } from '../common/errors';

export function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new UserError(`${name} must be a whole number, got "${value}"`, 'bad_option');
    const n = Number(value);
    if (n < min || n > max) throw new UserError(`${name} must be between ${min} and ${max}, got ${n}`, 'bad_option');
    return n;
  };
}

/** Reads all of stdin when it is not a terminal (text piped in); otherwise undefined. */
export async function readStdinIfPiped(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
