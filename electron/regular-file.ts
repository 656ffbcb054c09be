// Opening a file that came from outside (a model, a download's sidecar) without ever blocking:
// a FIFO named x.gguf blocks open(2) for reading until a writer appears, and a device can be read
// forever. Opened with O_NONBLOCK and checked with fstat, anything but a regular file is refused
// at once. A Node-only leaf like paths.ts, for every layer that reads such files.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** What a path turned out to be when it is not a regular file. */
export class NotRegularFile extends Error {
  constructor(
    readonly path: string,
    /** 'a folder', 'a named pipe', 'a device', 'a socket', 'not a regular file'. */
    readonly what: string,
  ) {
    super(`${path} is ${what}, not a regular file`);
    this.name = 'NotRegularFile';
  }
}

/**
 * Opens `path` for reading when it is a regular file (symbolic links followed); NotRegularFile
 * otherwise, and the usual ENOENT/EACCES errors. The caller closes the handle.
 */
export async function openRegularFile(path: string): Promise<{ fh: FileHandle; size: number }> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new NotRegularFile(path, 'a folder');
    // A FIFO without a writer opened for reading is fine; one opened otherwise, or a socket, is ENXIO.
    if (code === 'ENXIO') throw new NotRegularFile(path, 'not a regular file');
    throw e;
  }
  try {
    const s = await fh.stat();
    if (!s.isFile()) {
      const what = s.isDirectory() ? 'a folder' : s.isFIFO() ? 'a named pipe' : s.isCharacterDevice() || s.isBlockDevice() ? 'a device' : s.isSocket() ? 'a socket' : 'not a regular file';
      throw new NotRegularFile(path, what);
    }
    return { fh, size: s.size };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** The text of a small regular file (at most `maxBytes`; more is an error), never blocking. */
export async function readSmallRegularFile(path: string, maxBytes = 1024 * 1024): Promise<string> {
  const { fh, size } = await openRegularFile(path);
  try {
    if (size > maxBytes) throw new Error(`${path} is ${size} bytes, more than ${maxBytes} expected`);
    const buf = Buffer.alloc(size);
    const { bytesRead } = await fh.read(buf, 0, size, 0);
    return buf.toString('utf8', 0, bytesRead);
  } finally {
    await fh.close();
  }
}
