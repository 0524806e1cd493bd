import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureSessionTmp, releaseSessionTmp } from '@dsh/core'

/**
 * A classic-BPF seccomp program (the form `bwrap --seccomp FD` loads) that makes
 * `socket(AF_UNIX, …)` fail with EACCES and refuses every syscall of a foreign ABI (x32,
 * 32-bit compat), where the numbers differ. Why: `--unshare-net` cuts IP and abstract unix
 * sockets, but a path socket outside the workspace (a docker.sock, an agent's socket) is
 * reachable through the read-only bind — connect(2) needs no write access to the mount.
 * `socketpair` stays allowed (pipes between a command's own processes; it cannot reach
 * anything outside). Pure: the bytes only.
 */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const abi = ARCHES[arch]
  if (!abi) return undefined
  const LD_W_ABS = 0x20, JEQ_K = 0x15, JGE_K = 0x35, RET_K = 0x06
  const DENY = 0x00050000 | 13 // SECCOMP_RET_ERRNO | EACCES
  const ALLOW = 0x7fff0000
  // index: instruction (jump offsets count from the next instruction)
  const program: [number, number, number, number][] = [
    /* 0 */ [LD_W_ABS, 0, 0, 4], // seccomp_data.arch
    /* 1 */ [JEQ_K, 0, 5, abi.audit], // foreign ABI → 7 (deny)
    /* 2 */ [LD_W_ABS, 0, 0, 0], // seccomp_data.nr
    /* 3 */ [JGE_K, 3, 0, abi.x32Bit], // x32 numbers (bit 30) → 7
    /* 4 */ [JEQ_K, 0, 3, abi.socket], // not socket(2) → 8 (allow)
    /* 5 */ [LD_W_ABS, 0, 0, 16], // args[0] (low half: little-endian)
    /* 6 */ [JEQ_K, 0, 1, 1], // AF_UNIX → 7, else → 8
    /* 7 */ [RET_K, 0, 0, DENY],
    /* 8 */ [RET_K, 0, 0, ALLOW],
  ]
  const out = Buffer.alloc(program.length * 8)
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8)
    out.writeUInt8(jt, i * 8 + 2)
    out.writeUInt8(jf, i * 8 + 3)
    out.writeUInt32LE(k >>> 0, i * 8 + 4)
  })
  return out
}

/** AUDIT_ARCH_*, __NR_socket, and where foreign syscall numbers start. */
const ARCHES: Readonly<Record<string, { audit: number; socket: number; x32Bit: number }>> = {
  x64: { audit: 0xc000003e, socket: 41, x32Bit: 0x40000000 },
  // arm64 has no x32-style numbers: the bound is above every real syscall
  arm64: { audit: 0xc00000b7, socket: 198, x32Bit: 0x7fffffff },
}

let written: string | undefined

/**
 * The filter as a file for `sh -c 'exec "$@" 3<"$0"'` to open as fd 3: written once per
 * process into a fresh folder (unpredictable name, 0700) under the user's temp base, which
 * sandboxed commands cannot write; removed at exit, and — like a session's temp root — it
 * carries an owner file, so a dsh killed with -9 leaves it to the next one's sweep (0100).
 * Undefined on an architecture the filter does not know.
 */
export function unixSocketFilterFile(): string | undefined {
  if (written) return written
  const bytes = unixSocketFilter()
  if (!bytes) return undefined
  const name = `seccomp-${randomBytes(6).toString('hex')}`
  const file = join(ensureSessionTmp(name), 'unix-socket.bpf')
  writeFileSync(file, bytes, { mode: 0o400 })
  process.once('exit', () => { try { releaseSessionTmp(name) } catch { /* gone */ } })
  written = file
  return file
}
