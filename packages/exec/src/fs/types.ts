import type { ExecPolicy } from '@dsh/protocol'

export type FileType = 'file' | 'directory' | 'symlink' | 'other'

export interface FileStat {
  type: FileType
  size: number
  mtimeMs: number
  /** Permission bits (`mode & 0o7777`). */
  mode: number
}

export interface DirEntry { name: string; type: FileType }

/**
 * The file seam. Every path argument is absolute (use `resolve` first); a relative one
 * is rejected with `INVALID_PATH`. dsh's secret files (credentials store, patch files) are
 * refused to every read and write in every mode (PATH_DENIED, naming the file), through
 * symlinks and hard links too. Other reads are not policy-checked (every mode may read);
 * every write is checked against the call's `ExecPolicy` and lands by temp file + rename.
 * Failures are `DshError`s: FILE_NOT_FOUND, IS_DIRECTORY, NOT_A_DIRECTORY,
 * PERMISSION_DENIED, FILE_TOO_LARGE, PATH_DENIED, INVALID_PATH, FS_ERROR.
 */
export interface FsSeam {
  /** `path` made absolute against `cwd` and normalised (`~/` is the home directory). No symlink resolution. */
  resolve(cwd: string, path: string): string
  /** Follows symlinks; null when nothing is there (or a dangling link). */
  stat(path: string): Promise<FileStat | null>
  /** Does not follow a final symlink; null when nothing is there. */
  lstat(path: string): Promise<FileStat | null>
  /** The whole file; FILE_TOO_LARGE when it is bigger than `maxBytes`. */
  readFile(path: string, options?: { maxBytes?: number }): Promise<Uint8Array>
  /** Entries (no `.`/`..`) in directory order; symlinks are reported as `symlink`. */
  readdir(path: string): Promise<DirEntry[]>
  realpath(path: string): Promise<string>
  /** True when `path` reaches one of dsh's secret files (tools that read through other means filter with it). */
  isSecret(path: string): Promise<boolean>
  /**
   * The real path a write to `path` would reach, or PATH_DENIED when `policy` forbids it.
   * Uses the realpath of the nearest existing ancestor (and of the file itself when it is
   * a symlink), so neither `..` nor symlinks can leave the writable roots.
   */
  checkWrite(path: string, policy: ExecPolicy): Promise<string>
  /**
   * Writes `data` atomically: a temp file in the target's directory, then rename over the
   * real target (a hard link is replaced, never written through; a symlink's target is
   * written). Keeps the mode (and, when permitted, the owner) of an existing file; creates
   * missing parent directories. Returns the stat of the written file.
   */
  write(path: string, data: string | Uint8Array, policy: ExecPolicy): Promise<FileStat>
  /** `mkdir -p`, policy-checked. */
  mkdir(path: string, policy: ExecPolicy): Promise<void>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    fs: FsSeam
  }
}
