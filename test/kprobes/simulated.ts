/**
 * Checks for the instructions arm64 and riscv kprobes simulate from pt_regs
 * (decodeProbeInsn 'simulate'): every site of a class in the sample kernel
 * gets a probe whose pre_handler records the registers before and whose
 * post_handler records them after the simulation; each recorded hit is then
 * replayed on the CPU of an unprobed machine — same registers, the original
 * instruction executed for real — and the registers after it must be the
 * ones the simulation left. The probed run's kernel output must be the
 * unprobed run's.
 */
import assert from 'node:assert/strict';
import type { DecodedInsn } from '../../emulator/arch/types';
import type { Kprobe } from '../../emulator/kprobes';
import { mustVAddr } from '../../emulator/memory/address';
import { textPoke } from '../../emulator/memory/textPoke';
import { insns, rig, Rig } from './harness';

/** A class of instruction: its name and whether an instruction belongs to it. */
export interface SimClass {
  name: string;
  match(d: DecodedInsn): boolean;
  /** a conditional branch: both outcomes must be seen */
  conditional?: boolean;
  /** the memory the instruction reads (a literal load): recorded at the hit, given to the replay */
  reads?(d: DecodedInsn): { addr: bigint; len: number };
}

/** A rewrite of the kernel text applied before boot to both runs (e.g. a call pair turned into the short form a linker relaxes it to). */
export type TextPatch = { addr: bigint; bytes: Uint8Array };

export interface ClassOutcome {
  sites: number;
  hits: number;
  taken: number;
  notTaken: number;
}

/** every decodable instruction of every function in the image */
export function imageInsns(r: Rig): DecodedInsn[] {
  const out: DecodedInsn[] = [];
  for (const f of r.image.symbols.functions()) if (f.size > 0n) out.push(...insns(r, f.name));
  return out;
}

function applyPatches(r: Rig, patches: readonly TextPatch[]): void {
  for (const p of patches) textPoke(r.machine.kernel.mem, mustVAddr(p.addr), p.bytes);
}

const regsOf = (r: Rig, cpuId: number): bigint[] => {
  const cpu = r.machine.cpus[cpuId];
  return r.machine.arch.regs.map((_, i) => cpu.getReg(i));
};

/**
 * Probe every site of each class, replay every recorded hit (up to
 * `perSite` per site) on an unprobed CPU and compare all pt_regs fields.
 */
export function checkSimulatedClasses(arch: string, classes: readonly SimClass[], patches: readonly TextPatch[] = [], perSite = 6): Map<string, ClassOutcome> {
  const plain = rig({ arch });
  applyPatches(plain, patches);
  const expectedLines = plain.run();

  const r = rig({ arch });
  applyPatches(r, patches);
  const names = r.machine.arch.regs.map(x => x.name);
  interface Rec { cls: string; insn: DecodedInsn; before: bigint[]; after: bigint[]; data?: { addr: bigint; bytes: Uint8Array } }
  const recs: Rec[] = [];
  const outcome = new Map<string, ClassOutcome>(classes.map(c => [c.name, { sites: 0, hits: 0, taken: 0, notTaken: 0 }]));
  for (const d of imageInsns(r)) {
    const cls = classes.find(c => c.match(d));
    if (!cls) continue;
    let before: bigint[] | null = null;
    let data: Rec['data'];
    let n = 0;
    const kp: Kprobe = {
      addr: d.addr,
      pre_handler: (_p, regs) => {
        before = n < perSite ? regsOf(r, regs.cpu.id) : null;
        const rd = cls.reads?.(d);
        data = rd && { addr: rd.addr, bytes: regs.cpu.mem.readBytes(mustVAddr(rd.addr), rd.len) };
        return 0;
      },
      post_handler: (_p, regs) => {
        if (before) recs.push({ cls: cls.name, insn: d, before, after: regsOf(r, regs.cpu.id), data });
        n++;
      },
    };
    const rc = r.engine.registerKprobe(kp);
    if (rc !== 0) continue; // blacklisted functions (notify_die ...)
    assert.equal(kp.ainsn?.mode, 'simulate', `${cls.name}: ${d.mnemonic} ${d.operands} at ${r.engine.describer.where(d.addr)} is simulated`);
    (outcome.get(cls.name) as ClassOutcome).sites++;
  }
  const lines = r.run();
  assert.equal(r.machine.exit?.reason, 'poweroff');
  assert.deepEqual([...lines].sort(), [...expectedLines].sort(), 'the kernel prints what it prints unprobed');

  // the replay: an unprobed machine's CPU runs the original instruction from the recorded registers
  const replay = rig({ arch });
  applyPatches(replay, patches);
  const cpu = replay.machine.cpus[0];
  const pcReg = replay.machine.arch.abi.pcReg;
  for (const rec of recs) {
    rec.before.forEach((v, i) => { if (i !== pcReg) cpu.setReg(i, v); });
    if (rec.data) cpu.mem.writeBytes(mustVAddr(rec.data.addr), rec.data.bytes);
    cpu.setPc(rec.insn.addr);
    const res = cpu.run(1);
    const where = `${rec.cls} ${rec.insn.mnemonic} ${rec.insn.operands} at ${replay.engine.describer.where(rec.insn.addr)}`;
    assert.equal(res.trap, null, `${where}: ran without a trap`);
    assert.equal(res.executed, 1);
    const got = regsOf(replay, 0);
    const diff = names.filter((_, i) => got[i] !== rec.after[i]).map(n => `${n}: simulated ${rec.after[names.indexOf(n)].toString(16)}, executed ${got[names.indexOf(n)].toString(16)}`);
    assert.deepEqual(diff, [], where);
    const o = outcome.get(rec.cls) as ClassOutcome;
    o.hits++;
    if (cpu.getPc() === rec.insn.addr + BigInt(rec.insn.length)) o.notTaken++; else o.taken++;
  }
  for (const c of classes) {
    const o = outcome.get(c.name) as ClassOutcome;
    assert.ok(o.hits > 0, `${c.name}: ${o.sites} sites, some hit (${JSON.stringify(o)})`);
    if (c.conditional) assert.ok(o.taken > 0 && o.notTaken > 0, `${c.name}: taken and not taken seen (${JSON.stringify(o)})`);
  }
  return outcome;
}
