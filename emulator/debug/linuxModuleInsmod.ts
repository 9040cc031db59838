/**
 * The debugger inserts the launch's `modules` itself (launch.json
 * `"insmod": true` beside `"modules"` on the Linux machine), with no help
 * from the guest's init script and no typing:
 *  - the .ko files go into one more newc archive appended to the initrd
 *    (Linux unpacks every archive of a concatenated initrd into the same
 *    rootfs), under /kprobe-debug/modules/, in the launch's order, with a
 *    small script /kprobe-debug/init;
 *  - the command line gets `rdinit=/kprobe-debug/init`: the kernel runs the
 *    script as the first process; it inserts each module with insmod
 *    (busybox's when the initramfs has /bin/busybox) and then execs the
 *    initramfs's own init (the `rdinit=` the launch's `append` named, else
 *    /init) with the same arguments, as PID 1.
 * So each module is loaded before the guest's init runs, every boot at the
 * same point (deterministic); with the module breakpoints placed at
 * do_init_module (linuxModuleLoad.ts) a breakpoint in a module's init
 * stops during boot. A module insmod refuses is printed on the console by
 * insmod with the script's line naming it; the boot goes on.
 */
import { basename } from 'node:path';

export const INSMOD_DIR = '/kprobe-debug/modules';
export const INSMOD_INIT = '/kprobe-debug/init';

/** the script run as rdinit: insmod each module, then the initramfs's own init */
export function insmodScript(names: readonly string[], init: string): string {
  return [
    '#!/bin/sh',
    '# kprobe-debug: the launch\'s modules, inserted before the initramfs\'s init runs',
    'if [ -x /bin/busybox ]; then ins="/bin/busybox insmod"; else ins=insmod; fi',
    ...names.map(n => `$ins ${INSMOD_DIR}/${n} || echo "kprobe-debug: insmod ${INSMOD_DIR}/${n} failed"`),
    `exec ${init} "$@"`,
    '',
  ].join('\n');
}

/** the command line with rdinit= pointing at the script, and the init the script goes on with */
export function insmodCmdline(append: string): { cmdline: string; init: string } {
  const words = append.split(/\s+/).filter(Boolean);
  const rd = words.filter(w => w.startsWith('rdinit='));
  const init = rd.length > 0 ? rd[rd.length - 1].slice('rdinit='.length) : '/init';
  if (!/^\/[\w./-]*$/.test(init)) throw new Error(`launch: "insmod": the command line's rdinit=${init} is not an absolute path the insmod script can exec`);
  return { cmdline: [...words.filter(w => !w.startsWith('rdinit=')), `rdinit=${INSMOD_INIT}`].join(' '), init };
}

/** the newc archive of the modules and the script (uncompressed; Linux takes a plain cpio segment) */
export function insmodArchive(modules: readonly { path: string; data: Uint8Array }[], init: string): Uint8Array {
  const names = modules.map(m => basename(m.path));
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`launch: "modules": two files are named ${dup}; the guest's insmod needs distinct names`);
  const w = new NewcWriter();
  w.dir('kprobe-debug');
  w.dir(INSMOD_DIR.slice(1));
  modules.forEach((m, i) => w.file(`${INSMOD_DIR.slice(1)}/${names[i]}`, 0o100644, m.data));
  w.file(INSMOD_INIT.slice(1), 0o100755, new TextEncoder().encode(insmodScript(names, init)));
  return w.end();
}

/** a newc ("070701") cpio writer: directories and regular files */
class NewcWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private ino = 0x7d000;

  dir(name: string): void { this.entry(name, 0o040755, new Uint8Array(0), 2); }
  file(name: string, mode: number, data: Uint8Array): void { this.entry(name, mode, data, 1); }

  private entry(name: string, mode: number, data: Uint8Array, nlink: number): void {
    const hex = (v: number): string => v.toString(16).toUpperCase().padStart(8, '0');
    const nameBytes = new TextEncoder().encode(`${name}\0`);
    const head = `070701${[this.ino++, mode, 0, 0, nlink, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0].map(hex).join('')}`;
    this.put(new TextEncoder().encode(head));
    this.put(nameBytes);
    this.pad();
    this.put(data);
    this.pad();
  }

  private put(b: Uint8Array): void { this.parts.push(b); this.size += b.length; }
  private pad(): void { const n = (4 - (this.size % 4)) % 4; if (n > 0) this.put(new Uint8Array(n)); }

  end(): Uint8Array {
    this.entry('TRAILER!!!', 0, new Uint8Array(0), 1);
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}
