/**
 * Filling the emulated filesystem: from a host directory (`--rootfs DIR`,
 * launch attribute `rootfs`; file bytes read lazily, the host never
 * written) and from a Linux initramfs in cpio `newc` format (optionally
 * gzip-compressed, as the kernel's populate_rootfs accepts), plus the
 * device nodes every system has (/dev/console, /dev/null, /dev/zero) and
 * /tmp. Bad input is one clear line naming the file and what is wrong.
 */
import { lstatSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import type * as zlib from 'node:zlib';
import { CharDevice, FsErrno, S_IFCHR, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, Vfs } from './vfs';
import { MACHINE_RAM } from '../ram';

/** The most an initramfs may unpack to: the machine's RAM (its files live in memory, as in Linux's rootfs). */
const MAX_UNPACKED = MACHINE_RAM;

/** A problem with what the filesystem is populated from (the message says what and where). */
export class RootfsError extends Error {}

/** The tree a machine boots with: --rootfs's host directory, then each initramfs over it (as Linux unpacks them in order). */
export function populateVfs(fs: Vfs, src: { rootfs?: string; initramfs?: readonly string[] }): void {
  if (src.rootfs !== undefined) populateFromHost(fs, src.rootfs);
  for (const f of src.initramfs ?? []) {
    let bytes: Uint8Array;
    try {
      const size = statSync(f).size;
      if (size > MAX_UNPACKED) throw new RootfsError(`initramfs ${f}: ${size} bytes, more than the machine's memory (${MACHINE_RAM >> 20} MiB RAM)`);
      bytes = readFileSync(f);
    } catch (e) {
      if (e instanceof RootfsError) throw e;
      throw new RootfsError(`initramfs ${f}: cannot be read (${e instanceof Error ? e.message : String(e)})`);
    }
    populateFromCpio(fs, bytes, f);
  }
}

/**
 * Copy a host directory tree in (symlinks as symlinks; other node types
 * skipped). Host names are bytes (a name need not be UTF-8): the host is
 * reached by those bytes, and the emulated tree names the file by their
 * UTF-8 decoding, as a program's path is decoded.
 */
export function populateFromHost(fs: Vfs, hostDir: string): void {
  let st;
  try { st = statSync(hostDir); } catch {
    throw new RootfsError(`rootfs ${hostDir}: no such directory`);
  }
  if (!st.isDirectory()) throw new RootfsError(`rootfs ${hostDir}: not a directory`);
  const walk = (host: Buffer, into: string): void => {
    let names: { name: string; raw: Buffer }[];
    try {
      names = readdirSync(host, { encoding: 'buffer' }).map(raw => ({ name: td.decode(raw), raw }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : Buffer.compare(a.raw, b.raw)));
    } catch (e) {
      throw new RootfsError(`rootfs ${host.toString()}: cannot be read (${e instanceof Error ? e.message : String(e)})`);
    }
    for (const { name, raw } of names) {
      const h = Buffer.concat([host, SLASH, raw]);
      const p = `${into}/${name}`;
      let s;
      try { s = lstatSync(h); } catch (e) {
        throw new RootfsError(`rootfs ${h.toString()}: cannot be read (${e instanceof Error ? e.message : String(e)})`);
      }
      if (s.isSymbolicLink()) fs.symlink(p, td.decode(readlinkSync(h, { encoding: 'buffer' })));
      else if (s.isDirectory()) { fs.mkdirp(p, s.mode & 0o7777); walk(h, p); }
      else if (s.isFile()) fs.writeFile(p, { host: isUtf8(raw) && isUtf8(host) ? h.toString() : h, size: s.size }, s.mode & 0o7777);
    }
  };
  walk(Buffer.from(hostDir), '');
}

const SLASH = Buffer.from('/');
const isUtf8 = (b: Buffer): boolean => { try { new TextDecoder('utf-8', { fatal: true }).decode(b); return true; } catch { return false; } };

const td = new TextDecoder();

/** Unpack a cpio `newc` (070701 / 070702) archive, gzip-compressed or not, into the tree. */
export function populateFromCpio(fs: Vfs, bytes: Uint8Array, file: string): void {
  let data = bytes;
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
    // node:zlib loaded here, not at start-up (a cold start pays ~3 ms for it; few runs have a gzip initramfs)
    // the archive is unpacked into the machine's memory: more than its RAM is refused, not unpacked
    const z = require('node:zlib') as typeof zlib;
    // one output chunk as large as the bound (untouched until written): no second copy when the chunks are joined
    try { data = z.gunzipSync(data, { maxOutputLength: MAX_UNPACKED, chunkSize: MAX_UNPACKED }); } catch (e) {
      if (e instanceof RangeError && /maxOutputLength|larger than/i.test(e.message)) {
        throw new RootfsError(`initramfs ${file}: unpacks to more than ${MAX_UNPACKED >> 20} MiB, the machine's memory (${MACHINE_RAM >> 20} MiB RAM)`);
      }
      throw new RootfsError(`initramfs ${file}: corrupt gzip data (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  let off = 0;
  const hex = (at: number, field: string): number => {
    const s = td.decode(data.subarray(at, at + 8));
    if (!/^[0-9a-fA-F]{8}$/.test(s)) throw new RootfsError(`initramfs ${file}: corrupt cpio header at offset 0x${off.toString(16)}: ${field} is not hex`);
    return parseInt(s, 16);
  };
  const align4 = (n: number): number => (n + 3) & ~3;
  for (;;) {
    if (off + 110 > data.length) throw new RootfsError(`initramfs ${file}: truncated cpio archive at offset 0x${off.toString(16)} (no TRAILER!!! entry)`);
    const magic = td.decode(data.subarray(off, off + 6));
    if (magic !== '070701' && magic !== '070702') {
      throw new RootfsError(`initramfs ${file}: not a cpio newc archive at offset 0x${off.toString(16)} (magic "${magic.replace(/[^\x20-\x7e]/g, '?')}", expected 070701)`);
    }
    const mode = hex(off + 14, 'c_mode');
    const filesize = hex(off + 54, 'c_filesize');
    const rmajor = hex(off + 78, 'c_rdevmajor'), rminor = hex(off + 86, 'c_rdevminor');
    const namesize = hex(off + 94, 'c_namesize');
    const nameAt = off + 110;
    if (namesize < 1 || nameAt + namesize > data.length) throw new RootfsError(`initramfs ${file}: corrupt cpio entry at offset 0x${off.toString(16)}: name runs past the archive`);
    const name = td.decode(data.subarray(nameAt, nameAt + namesize - 1));
    const dataAt = align4(nameAt + namesize);
    if (dataAt + filesize > data.length) throw new RootfsError(`initramfs ${file}: corrupt cpio entry "${name}" at offset 0x${off.toString(16)}: its data runs past the archive`);
    if (name === 'TRAILER!!!') return;
    const body = data.subarray(dataAt, dataAt + filesize);
    const path = '/' + name.replace(/^\.?\/+/, '').replace(/^\.$/, '');
    if (path !== '/' && canCreate(fs, path, (mode & S_IFMT) === S_IFDIR)) {
      try {
        switch (mode & S_IFMT) {
          case S_IFDIR: fs.mkdirp(path, mode & 0o7777); break;
          case S_IFREG: fs.writeFile(path, body, mode & 0o7777); break;
          case S_IFLNK: fs.symlink(path, td.decode(body)); break;
          case S_IFCHR: {
            const dev = knownDevice(rmajor, rminor);
            if (dev) fs.device(path, dev, rmajor, rminor, mode & 0o7777);
            break;
          }
          default: break; // block devices, fifos, sockets: not kept
        }
      } catch (e) {
        // an entry under something that is not a directory ("a" a file, then "a/b"): skipped, as Linux's unpacker does
        if (!(e instanceof FsErrno && e.errno === 'ENOTDIR')) throw e;
      }
    }
    off = align4(dataAt + filesize);
  }
}

/**
 * Whether an archive entry may take `path`, as Linux's unpacker decides
 * (maybe_unlink, then create): what is there is replaced, but a non-empty
 * directory stays (rmdir fails, the new entry is skipped) and an existing
 * directory is kept for a directory entry.
 */
function canCreate(fs: Vfs, path: string, dirEntry: boolean): boolean {
  const r = fs.lookup(path, fs.root, false);
  if (!r.ok || !r.inode.isDir) return true;
  return dirEntry || r.inode.children!.size === 0;
}

export const nullDevice: CharDevice = { name: 'null', read: () => new Uint8Array(0), write: b => b.length };
export const zeroDevice: CharDevice = { name: 'zero', read: n => new Uint8Array(Math.min(n, 1 << 20)), write: b => b.length };

function knownDevice(major: number, minor: number): CharDevice | undefined {
  if (major === 1 && minor === 3) return nullDevice;
  if (major === 1 && minor === 5) return zeroDevice;
  return undefined;
}

/** /dev/urandom and /dev/random: a deterministic stream from a seed (the machine's randomSeed) */
export function randomDevice(seed: bigint): CharDevice {
  let x = 0x2545f4914f6cdd1dn ^ seed;
  return {
    name: 'urandom',
    read: n => {
      const out = new Uint8Array(Math.min(n, 1 << 20));
      for (let i = 0; i < out.length; i++) {
        x ^= x >> 12n; x ^= (x << 25n) & 0xffffffffffffffffn; x ^= x >> 27n;
        out[i] = Number(((x * 0x2545f4914f6cdd1dn) >> 56n) & 0xffn);
      }
      return out;
    },
    write: b => b.length,
  };
}

/** /dev/console (the given device), /dev/null, /dev/zero, /dev/[u]random, /tmp, /proc — where the tree lacks them. */
export function addStandardNodes(fs: Vfs, console: CharDevice, seed = 0n): void {
  const dev = fs.mkdirp('/dev');
  if (!dev.children!.has('console')) fs.device('/dev/console', console, 5, 1, 0o600);
  if (!dev.children!.has('tty')) fs.device('/dev/tty', console, 5, 0, 0o666);
  if (!dev.children!.has('null')) fs.device('/dev/null', nullDevice, 1, 3);
  if (!dev.children!.has('zero')) fs.device('/dev/zero', zeroDevice, 1, 5);
  if (!dev.children!.has('urandom')) { const r = randomDevice(seed); fs.device('/dev/urandom', r, 1, 9); fs.device('/dev/random', r, 1, 8); }
  fs.mkdirp('/tmp', 0o1777);
  fs.mkdirp('/proc/self');
}
