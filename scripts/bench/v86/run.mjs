// One run of a v86 peer image (see build.sh): v86 from npm (its wasm JIT) boots Debian's SeaBIOS
// (package seabios: /usr/share/seabios) and the multiboot image; the image prints to the serial
// port. Prints one JSON line: { instructions, seconds, output } for the part between
// "v86-bench: start" and "v86-bench: exit N" (the BIOS and the loader left out), or { skip } when
// v86 or the BIOS is not installed. Usage: node run.mjs IMAGE
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';

const BIOS_DIR = '/usr/share/seabios';
const image = process.argv[2];
const done = o => { console.log(JSON.stringify(o)); process.exit(0); };
if (!image || !existsSync(image)) { console.error(`run.mjs: no image ${image ?? ''}`); process.exit(2); }
for (const f of ['bios.bin', 'vgabios-stdvga.bin']) {
  if (!existsSync(`${BIOS_DIR}/${f}`)) done({ skip: `no ${BIOS_DIR}/${f} (apt-get install seabios)` });
}
let V86, wasm;
try {
  ({ V86 } = await import('v86'));
  wasm = createRequire(import.meta.url).resolve('v86').replace(/libv86\.mjs$/, 'v86.wasm');
} catch (e) {
  done({ skip: `the v86 package is not installed (npm ci installs it): ${e instanceof Error ? e.message : e}` });
}
const bytes = p => { const b = readFileSync(p); return { buffer: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) }; };
const emu = new V86({
  wasm_path: wasm,
  bios: bytes(`${BIOS_DIR}/bios.bin`),
  vga_bios: bytes(`${BIOS_DIR}/vgabios-stdvga.bin`),
  multiboot: bytes(image),
  memory_size: 64 * 1024 * 1024,
  autostart: true, disable_keyboard: true, disable_mouse: true, disable_speaker: true,
});
let line = '', out = '', t0 = 0, c0 = 0, started = false;
emu.add_listener('serial0-output-byte', b => {
  const ch = String.fromCharCode(b);
  if (ch !== '\n') { line += ch; return; }
  const now = performance.now(), count = emu.get_instruction_counter();
  if (line === 'v86-bench: start') { started = true; t0 = now; c0 = count; }
  else if (line.startsWith('v86-bench: exit ')) {
    done({ instructions: count - c0, seconds: (now - t0) / 1000, output: out, exit: Number(line.slice(16)) });
  } else if (started) out += `${line}\n`;
  line = '';
});
setTimeout(() => { console.error(`run.mjs: ${image} did not finish in 120 s (${emu.get_instruction_counter()} instructions)`); process.exit(1); }, 120_000);
