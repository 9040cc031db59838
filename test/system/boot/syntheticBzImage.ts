/** A synthetic x86 bzImage for loader and machine tests: a setup header with the fields a 64-bit loader reads. */

/** A synthetic bzImage: boot sector + setup sectors with a setup header, then `kernelBytes` of "kernel". */
export function bzImage(o: { version?: number; xloadflags?: number; cmdlineSize?: number; initSize?: number; kernelBytes?: number; setupSects?: number; relocatable?: boolean; pref?: bigint; truncate?: number } = {}): Uint8Array {
  const setupSects = o.setupSects ?? 4;
  const kernelBytes = o.kernelBytes ?? 0x1000;
  const img = new Uint8Array((setupSects + 1) * 512 + kernelBytes);
  const dv = new DataView(img.buffer);
  img[0x1f1] = setupSects;
  dv.setUint32(0x1f4, kernelBytes / 16, true);
  dv.setUint16(0x1fe, 0xaa55, true);
  img[0x200] = 0xeb; img[0x201] = 0x6a; // jmp: the header ends at 0x202 + 0x6a = 0x26c
  img.set([...'HdrS'].map(c => c.charCodeAt(0)), 0x202);
  dv.setUint16(0x206, o.version ?? 0x020f, true);
  img[0x211] = 1;
  dv.setUint32(0x22c, 0x7fffffff, true);
  dv.setUint32(0x230, 0x200000, true);
  img[0x234] = o.relocatable === false ? 0 : 1;
  dv.setUint16(0x236, o.xloadflags ?? 0x7f, true);
  dv.setUint32(0x238, o.cmdlineSize ?? 2047, true);
  dv.setBigUint64(0x258, o.pref ?? 0x1000000n, true);
  dv.setUint32(0x260, o.initSize ?? 0x400000, true);
  for (let i = 0; i < kernelBytes; i++) img[(setupSects + 1) * 512 + i] = (i * 7 + 1) & 0xff;
  return o.truncate ? img.subarray(0, o.truncate) : img;
}

