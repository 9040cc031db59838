/**
 * `kprobe-run boot --kernel VMLINUZ [--initrd FILE] --append "..." [--cpus N]
 * [--memory MB] [--max-instructions N] [--input "cmd\n..."]`: Debian's (or
 * any x86_64) Linux bzImage booted on the full-system PC (emulator/system/),
 * its console on stdout; input lines typed one per shell prompt.
 */
import { readFileSync } from 'node:fs';
import { CliError, CliIo, registerCommand } from '../io';
import { BootError } from '../../system/boot/setupHeader';
import { bootSession } from '../../system/pcBoot';
import { allTranslators, defaultTranslateMode, type TranslateMode } from '../../jit';

const HELP = `--kernel FILE           a bzImage (x86 boot protocol >= 2.12, 64-bit entry)
--initrd FILE           an initramfs (cpio, or gzip/lz4/xz/zstd-compressed cpio)
--append "CMDLINE"      the kernel command line (acpi=off: one CPU, no ACPI tables)
--cpus N                CPUs (default 2; 1 with acpi=off)
--memory MB             RAM in MiB (default 256)
--max-instructions N    stop after N instructions (default 20000000000)
--input "LINES"         lines typed at the shell prompt, one per prompt ("\\n" separates them); the boot ends at the prompt after the last
--no-translate          the interpreter alone (= --translate off)
--translate MODE        the block translator: on (default, else KPROBE_TRANSLATE), off, or lockstep (every translated block checked against the interpreter; slow)
`;

function readFile(what: string, path: string | undefined): { name: string; data: Uint8Array } | undefined {
  if (path === undefined) return undefined;
  try { return { name: path, data: new Uint8Array(readFileSync(path)) }; } catch (e) {
    throw new CliError(`boot: ${what} ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

function intArg(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new CliError(`boot: ${name} ${v}: expected an integer >= ${min}`);
  return n;
}

registerCommand('boot', {
  summary: 'boot an x86_64 Linux bzImage on the full-system PC, its console on stdout',
  usage: '--kernel VMLINUZ [--initrd FILE] --append "..." [--cpus N] [--memory MB] [--max-instructions N] [--input "cmd\\n..."] [--no-translate | --translate MODE]',
  help: HELP,
  async run(args: string[], io: CliIo): Promise<number> {
    const opt = new Map<string, string>();
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === '--no-translate') { opt.set('--translate', 'off'); continue; }
      if (!['--kernel', '--initrd', '--append', '--cpus', '--memory', '--max-instructions', '--input', '--translate'].includes(a)) throw new CliError(`boot: unknown argument ${a}`);
      if (i + 1 >= args.length) throw new CliError(`boot: ${a} needs a value`);
      opt.set(a, args[++i]);
    }
    const kernel = readFile('--kernel', opt.get('--kernel'));
    if (!kernel) throw new CliError('boot: --kernel VMLINUZ is required');
    const initrd = readFile('--initrd', opt.get('--initrd'));
    const cmdline = opt.get('--append') ?? 'console=ttyS0';
    const acpi = !/(^|\s)acpi=off(\s|$)/.test(cmdline);
    const cpus = intArg('--cpus', opt.get('--cpus'), 1) ?? (acpi ? 2 : 1);
    const memoryMiB = intArg('--memory', opt.get('--memory'), 1) ?? 256;
    const maxInstructions = intArg('--max-instructions', opt.get('--max-instructions'), 1) ?? 20_000_000_000;
    const inputText = opt.get('--input');
    const input = inputText === undefined ? [] : inputText.replace(/\\n/g, '\n').split('\n').filter(l => l.length > 0);
    const modeArg = opt.get('--translate');
    if (modeArg !== undefined && modeArg !== 'on' && modeArg !== 'off' && modeArg !== 'lockstep') {
      throw new CliError(`boot: --translate ${modeArg}: expected on, off or lockstep`);
    }
    const translate: TranslateMode = modeArg ?? defaultTranslateMode();
    const translatedSoFar = (): number => allTranslators().get(`x86_64:${translate}`)?.stats.translatedInsns ?? 0;
    const translated0 = translatedSoFar();
    let r;
    try {
      r = bootSession({
        kernel, initrd, cmdline, cpus, memoryMiB, acpi, maxInstructions, input, translate,
        onConsole: t => io.out(t),
        onLog: l => io.err(`[machine] ${l}\n`),
      });
    } catch (e) {
      if (e instanceof BootError || e instanceof RangeError) throw new CliError(`boot: ${e.message}`);
      throw e;
    }
    const translated = translatedSoFar() - translated0;
    const secs = `${r.instructions} instructions, ${translated} translated (translator ${translate}), ${(Number(r.virtualNs) / 1e9).toFixed(3)} s virtual`;
    if (r.panic !== null) { io.err(`\nboot: the guest panicked: ${r.panic} (${secs})\n`); return 1; }
    switch (r.stop.kind) {
      case 'done': io.err(`\nboot: reached ${r.stop.detail} (${secs})\n`); return 0;
      case 'poweroff': case 'reset': io.err(`\nboot: ${r.stop.detail} (${secs})\n`); return 0;
      case 'limit': io.err(`\nboot: stopped at --max-instructions (${secs})\n`); return 2;
      case 'tripleFault': io.err(`\nboot: the guest triple-faulted: ${r.stop.detail} (${secs})\n`); return 1;
      default: io.err(`\nboot: the machine stopped: ${r.stop.kind}: ${r.stop.detail} (${secs})\n`); return 1;
    }
  },
});
