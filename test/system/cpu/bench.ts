/**
 * A figure, not a test: M instructions/s of a load/store hot loop on the
 * emulated-kernel machine's CPU (flat Memory, interpreter) and on a
 * system-mode CPU whose every access goes through the 4-level page walk's
 * TLB. Run: node out/test/system/cpu/bench.js [iterations]
 */
import { machine, DATA } from '../../fixtures/x86/harness';
import { SysMachine, KCODE, KDATA, RBX, RDX } from './harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';

// loop: inc rax; mov [rbx], rax; mov rcx, [rbx]; dec rdx; jnz loop; hlt
const LOOP = '48 ff c0 48 89 03 48 8b 0b 48 ff ca 75 f2 f4';
const n = Number(process.argv[2] ?? 2_000_000);

function flat(): number {
  const { cpu } = machine(LOOP);
  cpu.jit = null;
  cpu.lo[3] = DATA; cpu.lo[2] = n;
  const t0 = process.hrtime.bigint();
  let done = 0;
  while (done < 5 * n) { const r = cpu.run(1_000_000); done += r.executed; if (r.trap) break; }
  return done / (Number(process.hrtime.bigint() - t0) / 1e3);
}
function paged(): number {
  const m = new SysMachine();
  m.code(KCODE, LOOP);
  m.setReg(RBX, BigInt(KDATA)); m.setReg(RDX, BigInt(n));
  const t0 = process.hrtime.bigint();
  let done = 0;
  while (done < 5 * n) { const r = runSystemCpu(m.cpu, 1_000_000); done += r.executed; if (r.halted || r.event) break; }
  return done / (Number(process.hrtime.bigint() - t0) / 1e3);
}
for (let k = 0; k < 3; k++) {
  const a = flat(), b = paged();
  console.log(`flat ${a.toFixed(1)} M insn/s, paged ${b.toFixed(1)} M insn/s, ratio ${(b / a).toFixed(2)}`);
}
