import { stat } from 'node:fs/promises';

/** Whether `path` exists (following links; a link loop leads to nothing). Any other error (EACCES, EIO, …) is thrown, not taken for "not there". */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return false;
    throw error;
  }
}
