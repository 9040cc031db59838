/** Test helper: a cpio newc archive of entries (as the kernel's gen_init_cpio writes them). */
export function cpio(entries: { name: string; mode: number; data?: Uint8Array | string; rdev?: [number, number] }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const enc = new TextEncoder();
  const pad = (n: number): Uint8Array => new Uint8Array((4 - (n % 4)) % 4);
  let ino = 100;
  for (const e of [...entries, { name: 'TRAILER!!!', mode: 0 }]) {
    const data = typeof e.data === 'string' ? enc.encode(e.data) : e.data ?? new Uint8Array(0);
    const name = enc.encode(e.name + '\0');
    const hex = (v: number): string => v.toString(16).padStart(8, '0');
    const rdev = 'rdev' in e && e.rdev ? e.rdev : [0, 0];
    const header = '070701' + [ino++, e.mode, 0, 0, 1, 0, data.length, 0, 0, rdev[0], rdev[1], name.length, 0].map(hex).join('');
    parts.push(enc.encode(header), name, pad(110 + name.length), data, pad(data.length));
  }
  const total = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
