/**
 * The user-space kernel's pieces on their own (bad input is a clear error,
 * never a crash): the cpio newc initramfs reader (a program run from one;
 * corrupt archives are one clear line each), the filesystem's path walk
 * (symlinks, `..`, ELOOP, ENOTDIR), execve of an ELF for another arch
 * (-ENOEXEC with the reason in the kernel log), an unimplemented instruction
 * (SIGILL naming it, exit 132, no crash of the emulator).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadElf, parseElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { Vfs, S_IFDIR, S_IFLNK, S_IFREG, S_IFCHR } from '../../emulator/kernel/fs/vfs';
import { RootfsError, populateFromCpio } from '../../emulator/kernel/fs/populate';
import { execProcess } from '../../emulator/kernel/user/process';
import { Errno } from '../../emulator/kernel/abi';
import { repoPath } from '../util/paths';
import { cpio } from './cpio';
import { x86_64 } from '../../emulator/arch/x86_64/index';
import { Memory, PERM_R, PERM_U, PERM_X } from '../../emulator/memory/memory';
import { Backing } from '../../emulator/memory/backing';

const BIN = repoPath('test', 'userspace', 'bin');
const GOLDEN = repoPath('test', 'userspace', 'golden');

describe('user-space kernel pieces', () => {
  test('an initramfs (gzip-compressed cpio newc) holds the program; run from it, it prints what qemu printed', () => {
    const prog = readFileSync(join(BIN, 'procs-x86_64-gcc-O2.elf'));
    const archive = gzipSync(cpio([
      { name: 'bin', mode: S_IFDIR | 0o755 },
      { name: 'bin/procs', mode: S_IFREG | 0o755, data: prog },
      { name: 'dev', mode: S_IFDIR | 0o755 },
      { name: 'dev/null', mode: S_IFCHR | 0o666, rdev: [1, 3] },
      { name: 'etc', mode: S_IFDIR | 0o755 },
      { name: 'etc/motd', mode: S_IFREG | 0o644, data: 'hi\n' },
      { name: 'etc/link', mode: S_IFLNK | 0o777, data: 'motd' },
    ]));
    const dir = mkdtempSync(join(tmpdir(), 'kprobe-initramfs-'));
    try {
      const file = join(dir, 'initramfs.cpio.gz');
      writeFileSync(file, archive);
      let out = '';
      const m = Machine.forUserProgram(parseElf(Uint8Array.from(prog), '/bin/procs'), ['/bin/procs'],
        { stdout: b => { out += Buffer.from(b).toString(); }, stderr: () => {} }, { initramfs: [file], execPath: '/bin/procs' });
      const exit = m.run();
      assert.equal(out, readFileSync(join(GOLDEN, 'procs-x86_64-gcc-O2.out'), 'utf8'));
      assert.equal(exit.code, 5);
      const k = m.kernel;
      const self = k.processes.get(1)!;
      assert.equal(self.exe, (k.fs.lookup('/bin/procs', k.fs.root) as { inode: unknown }).inode, 'the program is the archive\'s /bin/procs');
      const link = k.fs.lookup('/etc/link', k.fs.root);
      assert.ok(link.ok);
      assert.equal(new TextDecoder().decode(link.inode.data()), 'hi\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the stack starts at 128 KiB and grows on faults below it (expand_stack), up to RLIMIT_STACK', () => {
    const path = join(BIN, 'procs-x86_64-gcc-O0.elf');
    const m = Machine.forUserProgram(loadElf(path), [path], { stdout: () => {}, stderr: () => {} });
    const stack = (mm = m.kernel.processes.get(1)!.mm) => mm.allRegions().find(r => r.name === '[stack]')!;
    assert.equal(stack().size, 128 * 1024);
    // its size when the process ends (exit_mmap unmaps it then)
    let last = 0;
    m.kernel.mmObservers.push({ mmReleased: (p, mm) => { if (p.pid === 1) last = stack(mm).size; } });
    assert.equal(m.run().code, 5);
    assert.ok(last > 1200 * 1024, `${last / 1024} KiB after 300 frames of 4 KiB`);
    assert.ok(last <= 8 << 20);
  });

  test('corrupt archives: bad magic, truncated, a name or data past the end, bad gzip — each one line naming the file and offset', () => {
    const fs = new Vfs();
    const good = cpio([{ name: 'a', mode: S_IFREG | 0o644, data: 'abc' }]);
    const cases: [Uint8Array, RegExp][] = [
      [new TextEncoder().encode('not an archive at all, no sir, not one bit of it......................................................................'), /initramfs x\.cpio: not a cpio newc archive at offset 0x0 \(magic "not an", expected 070701\)/],
      [good.subarray(0, 50), /truncated cpio archive at offset 0x0/],
      [good.subarray(0, good.length - 124), /truncated cpio archive at offset 0x/],
      [Uint8Array.from(good).fill(0x5a, 94, 102), /c_namesize is not hex/],
      [Uint8Array.from(good).fill(0x46, 94, 102), /corrupt cpio entry at offset 0x0: name runs past the archive/],
      [Uint8Array.of(0x1f, 0x8b, 1, 2, 3), /corrupt gzip data/],
    ];
    for (const [bytes, re] of cases) {
      assert.throws(() => populateFromCpio(fs, bytes, 'x.cpio'), (e: unknown) => e instanceof RootfsError && re.test(e.message) && !e.message.includes('\n'));
    }
  });

  test('the path walk: symlinks (relative, absolute, chains), .., ELOOP, ENOTDIR, a trailing slash', () => {
    const fs = new Vfs();
    fs.writeFile('/a/b/file', new TextEncoder().encode('x'));
    fs.symlink('/a/rel', 'b/file');
    fs.symlink('/a/abs', '/a/b');
    fs.symlink('/a/loop1', 'loop2');
    fs.symlink('/a/loop2', 'loop1');
    const look = (p: string, follow = true) => fs.lookup(p, fs.root, follow);
    const file = look('/a/b/file');
    assert.ok(file.ok);
    assert.equal((look('/a/rel') as { inode: unknown }).inode, file.inode);
    assert.equal((look('/a/abs/file') as { inode: unknown }).inode, file.inode);
    assert.equal((look('/a/b/../b/./file') as { inode: unknown }).inode, file.inode);
    assert.equal((look('/../../a/b/file') as { inode: unknown }).inode, file.inode, '.. of / is /');
    const l = look('/a/rel', false);
    assert.ok(l.ok && l.inode.isLink);
    assert.deepEqual(look('/a/loop1'), { ok: false, errno: Errno.ELOOP });
    assert.deepEqual(look('/a/b/file/x'), { ok: false, errno: Errno.ENOTDIR });
    assert.deepEqual(look('/a/b/file/'), { ok: false, errno: Errno.ENOTDIR });
    assert.deepEqual(look('/a/nope'), { ok: false, errno: Errno.ENOENT });
    assert.equal(fs.pathOf(file.inode), '/a/b/file');
    assert.notEqual(file.inode.ino, (look('/a/b') as { inode: { ino: bigint } }).inode.ino);
  });

  test('execve of an ELF for another arch: -ENOEXEC, the reason in the kernel log; the process goes on', () => {
    const path = join(BIN, 'procs-x86_64-gcc-O0.elf');
    const m = Machine.forUserProgram(loadElf(path), [path], { stdout: () => {}, stderr: () => {} });
    const k = m.kernel;
    const a64 = k.fs.writeFile('/bin/arm', Uint8Array.from(readFileSync(join(BIN, 'procs-aarch64-gcc-O0.elf'))), 0o755);
    const proc = k.processes.get(1)!;
    const r = execProcess(k, proc, m.cpus[0], a64, '/bin/arm', ['arm'], []);
    assert.deepEqual(r && { errno: r.errno }, { errno: 'ENOEXEC' });
    assert.match(r!.why, /an ELF for aarch64, and this machine is x86_64/);
    assert.equal(proc.exePath, path, 'still the old program');
    assert.equal(m.run().code, 5, 'which runs to its end');
  });

  test('an instruction the CPU does not implement: SIGILL naming it in the program\'s stderr, exit 128+4, the machine fine', () => {
    const path = join(BIN, 'procs-x86_64-gcc-O0.elf');
    let err = '';
    const image = loadElf(path);
    const m = Machine.forUserProgram(image, [path], { stdout: () => {}, stderr: b => { err += Buffer.from(b).toString(); } });
    // ud2 at the entry point (written through the process's view of its text)
    m.kernel.processes.get(1)!.mm.writeBytes(Number(image.entry), Uint8Array.of(0x0f, 0x0b), 'kernel');
    const exit = m.run();
    assert.equal(exit.code, 132);
    assert.match(err, /Illegal instruction \(invalid opcode: 0f 0b [0-9a-f ]+\(ud2\)\) at pc 0x[0-9a-f]+/);
  });
});

describe('a kernel image starts user space (kp_user_init, kprobe-run run --exec)', () => {
  const KERNEL = repoPath('test', 'fixtures', 'kernel', 'bin', 'userinit.elf');
  const withRootfs = (f: (root: string) => void): void => {
    const root = mkdtempSync(join(tmpdir(), 'kprobe-userinit-'));
    try { f(root); } finally { rmSync(root, { recursive: true, force: true }); }
  };

  test('the --exec program runs as a user process next to the kernel threads; its output on the console; the kernel gets its status', () => {
    withRootfs(root => {
      const bin = join(root, 'bin');
      mkdirSync(bin);
      copyFileSync(join(BIN, 'procs-x86_64-clang-O2.elf'), join(bin, 'procs'));
      chmodSync(join(bin, 'procs'), 0o755);
      const m = new Machine(loadElf(KERNEL), { cpus: 2, rootfs: root, exec: ['/bin/procs'] });
      const exit = m.run();
      const lines = m.printkRecords.map(r => r.text);
      assert.equal(lines[0], 'kernel: starting user space');
      const want = readFileSync(join(GOLDEN, 'procs-x86_64-clang-O2.out'), 'utf8').trimEnd().split('\n');
      assert.deepEqual(lines.slice(1, 1 + want.length), want);
      assert.deepEqual(lines.slice(1 + want.length), ['kernel: user space ended=5', 'kernel: again=-16']);
      assert.equal(exit.code, 5);
      assert.equal(m.kernel.oopsCount, 0);
    });
  });

  test('a program that is not in the machine\'s filesystem: the reason in the kernel log, -ENOENT to the kernel', () => {
    withRootfs(root => {
      const m = new Machine(loadElf(KERNEL), { cpus: 1, rootfs: root, exec: ['/bin/missing arg'] });
      const exit = m.run();
      const text = m.printkRecords.map(r => r.text).join('\n');
      assert.match(text, /user_init: \/bin\/missing: no such file in the machine's filesystem/);
      assert.match(text, /kernel: user space ended=-2/);
      assert.equal(exit.reason, 'poweroff');
    });
  });
});

describe('randomness is deterministic and seedable', () => {
  test('AT_RANDOM and /dev/urandom: the same seed gives the same bytes, another seed others', () => {
    const path = join(BIN, 'procs-x86_64-gcc-O0.elf');
    const sample = (seed: bigint): string => {
      const m = Machine.forUserProgram(loadElf(path), [path], { stdout: () => {}, stderr: () => {} }, { randomSeed: seed });
      const mm = m.kernel.processes.get(1)!.mm;
      const sp = Number(m.taskRegisters(1)![m.arch.abi.spReg]);
      // auxv after argc, argv[], NULL, envp[] (empty), NULL
      const argc = Number(mm.read64(sp));
      let at = sp + 8 * (argc + 3);
      let rnd = 0n;
      for (;; at += 16) { const t = mm.read64(at); if (t === 25n) { rnd = mm.read64(at + 8); break; } if (t === 0n) break; }
      const atRandom = Buffer.from(mm.readBytes(Number(rnd), 16)).toString('hex');
      const dev = m.kernel.fs.lookup('/dev/urandom', m.kernel.fs.root);
      assert.ok(dev.ok && dev.inode.device);
      const u = dev.inode.device.read(16) as Uint8Array;
      return `${atRandom} ${Buffer.from(u).toString('hex')}`;
    };
    assert.equal(sample(0n), sample(0n));
    assert.equal(sample(42n), sample(42n));
    const [a0, u0] = sample(0n).split(' '), [a1, u1] = sample(42n).split(' ');
    assert.notEqual(a0, a1);
    assert.notEqual(u0, u1);
  });
});

describe('file text shared between processes', () => {
  test('two address spaces mapping a file page read-only at one address share its decoded instructions, and a write to the page reaches both', () => {
    const code = new Uint8Array(3 * 4096);
    code.set([0xb8, 0x01, 0x00, 0x00, 0x00, 0xf4]); // mov eax, 1; hlt
    const file = Backing.file(77n, '/bin/shared', code);
    const base = 0x400000;
    const run = (mem: Memory): bigint => {
      const cpu = x86_64.createCpu(0, mem);
      cpu.userMode = true;
      cpu.setPc(BigInt(base));
      cpu.run(5);
      return cpu.getReg(x86_64.abi.retReg);
    };
    const a = new Memory('a'), b = new Memory('b');
    for (const m of [a, b]) m.mapBacking(base, 3 * 4096, PERM_R | PERM_X | PERM_U, 'text', file, 0);
    assert.equal(run(a), 1n);
    assert.equal(run(b), 1n);
    // the page's bytes change (as a probe would patch the page cache): both address spaces run the new code
    a.writeBytes(base + 1, Uint8Array.of(0x02), 'kernel');
    assert.equal(run(a), 2n);
    assert.equal(run(b), 2n);
  });

  test('mprotect(PROT_WRITE) of a private file mapping copies the pages: the program\'s writes never reach the file', () => {
    const path = join(BIN, 'procs-x86_64-gcc-O0.elf');
    const m = Machine.forUserProgram(loadElf(path), [path], { stdout: () => {}, stderr: () => {} });
    const proc = m.kernel.processes.get(1)!;
    const text = proc.mm.allRegions().find(r => r.backing.identity.kind === 'file')!;
    const before = Uint8Array.from(proc.exe!.data().subarray(0, 64));
    assert.ok(proc.mprotect(text.base, 4096, 7));
    const page = proc.mm.regionAt(text.base)!;
    assert.equal(page.backing.identity.kind, 'anonymous', 'a private copy');
    proc.mm.writeBytes(text.base, new Uint8Array(16).fill(0xcc), 'kernel');
    assert.deepEqual(Uint8Array.from(proc.exe!.data().subarray(0, 64)), before, 'the file is unchanged');
    assert.equal(proc.mm.regionAt(text.base + 4096)!.backing, text.backing, 'the rest still maps the file');
  });
});
