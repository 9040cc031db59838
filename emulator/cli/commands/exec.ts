/**
 * `kprobe-run exec [OPTIONS] PROG.elf [ARGS...]`: run a static Linux user
 * program in the emulator (like qemu-user): its stdout/stderr bytes go to
 * ours, its exit status is our exit code (128+N when killed by signal N).
 */
import { readFileSync } from 'node:fs';
import { loadElf } from '../../elf';
import { parseElf } from '../../elf/elfFile';
import type { ElfImage } from '../../elf/types';
import { Vfs } from '../../kernel/fs/vfs';
import { populateVfs } from '../../kernel/fs/populate';
import type { MachineOptions } from '../../machine';
import { Machine } from '../../machine';
import { CliError, CliIo, processIo, processWrite, registerCommand } from '../io';
import { printStats, reportExit, runMachine } from './run';
import { newRunContext, optionsHelp, optionsSynopsis, parseRunArgs } from './runOptions';
import { attachProbes } from '../../probes/attach';

/** Byte sinks for the program: raw bytes to the process streams, decoded text to other CliIo's. */
function sinks(io: CliIo): { stdout(b: Uint8Array): void; stderr(b: Uint8Array): void } {
  if (io === processIo) {
    return { stdout: b => { processWrite(process.stdout, b); }, stderr: b => { processWrite(process.stderr, b); } };
  }
  const out = new TextDecoder(), err = new TextDecoder();
  return {
    stdout: b => io.out(out.decode(b, { stream: true })),
    stderr: b => io.err(err.decode(b, { stream: true })),
  };
}

/**
 * The program: with --rootfs / --initramfs, an absolute path is looked up
 * in that tree first (a rootfs's /bin/busybox); otherwise, or when the tree
 * lacks it, the host file.
 */
function programImage(path: string, m: MachineOptions): ElfImage {
  if ((m.rootfs !== undefined || m.initramfs?.length) && path.startsWith('/')) {
    const fs = new Vfs();
    populateVfs(fs, m);
    const r = fs.lookup(path, fs.root);
    if (r.ok && r.inode.isReg) return parseElf(r.inode.data().slice(), path);
  }
  return loadElf(path);
}

/** All of our stdin (the process's; empty for other CliIo's), read when the program first reads. */
function readStdin(io: CliIo): Uint8Array {
  if (io !== processIo) return new Uint8Array(0);
  try { return new Uint8Array(readFileSync(0)); } catch { return new Uint8Array(0); }
}

registerCommand('exec', {
  summary: 'run a static Linux user program (x86_64 / aarch64 ELF) like qemu-user: its input, output and exit status',
  get usage() { return `${optionsSynopsis('exec')} PROG.elf [ARGS...]`; },
  get help() { return `PROG.elf and its ARGS: everything from the first non-option on.\n\n${optionsHelp('exec')}`; },
  async run(args: string[], io: CliIo): Promise<number> {
    const ctx = newRunContext();
    const pos = parseRunArgs('exec', args, ctx, true);
    if (pos.length === 0) throw new CliError('exec: expected PROG.elf [ARGS...]');
    const [path, ...rest] = pos;
    const image = programImage(path, ctx.machine);
    // as qemu-user: the program's stdin is ours, its working directory ours (unless it has a root filesystem)
    const userIo = { ...sinks(io), stdin: () => readStdin(io), tty: io === processIo && process.stdout.isTTY === true };
    const m = Machine.forUserProgram(image, [path, ...rest], userIo, {
      ...ctx.machine, cwd: ctx.machine.rootfs === undefined ? process.cwd() : undefined,
    });
    attachProbes(m); // the probe layer over the engines, before anything runs (guest-written kprobe_events find it)
    m.onPrintk(r => io.err(r.text + '\n'));
    const { exit, seconds } = await runMachine(m, ctx, io);
    const code = reportExit(path, exit, io);
    if (ctx.stats) printStats(m, seconds, io);
    return code;
  },
});
