/**
 * Interrupt and exception delivery in 64-bit mode (SDM vol. 3 ch. 6.14),
 * IRETQ, and the system-mode run loop around the arch-neutral one.
 *
 * Delivery: the 16-byte gate at IDTR.base + 16 * vector (#GP(vector*8+2)
 * beyond the limit or not an interrupt/trap gate; #NP when not present;
 * INT n / INT3 need DPL >= CPL), its 64-bit code segment, a stack switch to
 * the TSS's RSP<DPL> on a privilege change or to IST<n> when the gate names
 * one, the stack aligned to 16, SS RSP RFLAGS CS RIP [error code] pushed,
 * TF NT RF cleared, IF cleared by an interrupt gate. Nothing changes until
 * the frame is written: a fault while delivering is delivered instead, or
 * becomes #DF (contributory or #PF after contributory or #PF), and a fault
 * delivering #DF is a triple fault: a machine event, not a host exception.
 *
 * runSystem: between runs of the interpreter, take an NMI or the interrupt
 * line's vector when RFLAGS.IF = 1 and no STI/MOV SS shadow is pending,
 * and turn the run's traps (the exceptions its instructions raised, int3,
 * single-step) into deliveries. HLT ends the run halted: the platform
 * advances its virtual clock to the next event and calls again.
 */
import type { X86Cpu } from '../cpu';
import type { Trap } from '../../types';
import { fromVAddr, hex } from '../../../memory/address';
import { RF } from '../cpu';
import { TF } from '../flags';
import type { SystemState } from './state';
import { X86Exception, exceptionOf, VEC_BP, VEC_DB, VEC_DF, VEC_GP, VEC_NMI, VEC_NP, VEC_PF, VEC_SS, VEC_UD } from './exception';
import { decodeInsn, MAX_INSN_LEN } from '../decoder';
import { codeDescriptor, isCode, isWritableData, readDescriptor, tssStack, sysRead32, SREG_DS, SREG_ES, SREG_FS, SREG_GS, selectorOf } from './segments';

const TWO32 = 4294967296;
const IF = 0x200, NT = 0x4000, IOPL = 0x3000;
/** the kinds of event delivered: an exception (hardware), an external interrupt or NMI, a software INT n / INT3 */
export const EXC = 0, EXT = 1, SOFT = 2;
/**
 * Execute slots of the CPU's hardware debug unit from this index up are the
 * debugger's (the guest's DR0-DR3 are slots 0-3): a hit there stops the
 * machine with a 'debugBreak' event instead of a #DB, so the guest never
 * sees it and no guest byte changes. To go on, the debugger clears
 * `event` and sets the CPU's resume flag (the instruction then runs once
 * without matching).
 */
export const DEBUGGER_SLOT0 = 4;

export function setCpl(cpu: X86Cpu, s: SystemState, cs: number): void {
  s.cs = cs;
  const user = (cs & 3) === 3;
  cpu.userMode = user;
  s.mem.userMode = user;
}

/** class of an exception for the double-fault rule: 1 contributory, 2 page fault, 0 benign */
function faultClass(v: number): number {
  if (v === 0 || (v >= 10 && v <= 13)) return 1;
  return v === VEC_PF ? 2 : 0;
}

/**
 * Deliver `vector` now (the rip to push is cpu.rip: the faulting
 * instruction for a fault, the next one for a trap, INT n or an external
 * interrupt). Nested faults become #DF, then a triple fault (s.event).
 */
export function deliver(cpu: X86Cpu, s: SystemState, vector: number, errorCode: number, kind: number): void {
  let v = vector, code = errorCode, k = kind;
  for (let depth = 0; ; depth++) {
    try {
      deliverOnce(cpu, s, v, code, k);
      return;
    } catch (e) {
      if (!(e instanceof X86Exception)) throw e;
      if (v === VEC_DF || depth > 2) {
        s.event = { kind: 'tripleFault', rip: fromVAddr(cpu.rip), detail: `triple fault: ${e.reason} while delivering #DF` };
        return;
      }
      if (e.vector === VEC_PF && e.cr2 !== undefined) s.cr2 = e.cr2;
      const first = faultClass(v), second = faultClass(e.vector);
      if (k === EXC && first !== 0 && second !== 0 && !(first === 1 && second === 2)) { v = VEC_DF; code = 0; }
      else { v = e.vector; code = e.errorCode; }
      k = EXC;
    }
  }
}

/**
 * INT n / INT3 from inside the instruction: a fault while delivering is
 * the instruction's (the run loop puts rip back at it and the fault is
 * delivered as any other).
 */
export function deliverSoft(cpu: X86Cpu, s: SystemState, vector: number): void { deliverOnce(cpu, s, vector, -1, SOFT); }

function deliverOnce(cpu: X86Cpu, s: SystemState, vector: number, errorCode: number, kind: number): void {
  const ext = kind === SOFT ? 0 : 1;
  const idtErr = vector * 8 + 2 + ext;
  if (vector * 16 + 15 > s.idtLimit) throw new X86Exception(VEC_GP, idtErr, `vector ${vector} beyond the IDT's limit`);
  const g = s.idtBase + vector * 16;
  const w0 = sysRead32(s, g), w1 = sysRead32(s, g + 4), w2 = sysRead32(s, g + 8) | 0;
  const type = (w1 >>> 8) & 0xf, dpl = (w1 >>> 13) & 3, present = (w1 & 0x8000) !== 0, ist = w1 & 7;
  if (type !== 0xe && type !== 0xf) throw new X86Exception(VEC_GP, idtErr, `vector ${vector}: IDT entry type ${type} is not a 64-bit interrupt or trap gate`);
  const cpl = s.cpl;
  if (kind === SOFT && dpl < cpl) throw new X86Exception(VEC_GP, vector * 8 + 2, `int ${vector}: gate DPL ${dpl} < CPL ${cpl}`);
  if (!present) throw new X86Exception(VEC_NP, idtErr, `vector ${vector}: gate not present`);
  const sel = (w0 >>> 16) & 0xffff;
  const target = w2 * TWO32 + (((w1 & 0xffff0000) | (w0 & 0xffff)) >>> 0);
  const cd = codeDescriptor(s, sel, ext);
  const conforming = (cd.type & 4) !== 0;
  const newCpl = conforming ? cpl : cd.dpl;
  if (newCpl > cpl) throw new X86Exception(VEC_GP, (sel & 0xfffc) | ext, `vector ${vector}: code segment DPL ${cd.dpl} above CPL ${cpl}`);
  let rsp = cpu.regAddr(4);
  const oldRsp = rsp, oldSs = s.ss;
  if (ist !== 0) rsp = tssStack(s, 0x24 + 8 * (ist - 1));
  else if (newCpl < cpl) rsp = tssStack(s, 4 + 8 * newCpl);
  rsp -= ((rsp % 16) + 16) % 16;
  const flags = cpu.getRflags();
  const frame = [
    [oldSs, 0], [oldRsp | 0, Math.floor(oldRsp / TWO32)], [flags, 0], [s.cs, 0], [cpu.rip | 0, Math.floor(cpu.rip / TWO32)],
  ];
  if (errorCode >= 0) frame.push([errorCode, 0]);
  // the frame is written at the new privilege; nothing else changes until it is
  const mem = s.mem, user = mem.userMode;
  mem.userMode = newCpl === 3;
  try {
    for (let k = 0; k < frame.length; k++) mem.write64Halves(rsp - 8 * (k + 1), frame[k][0], frame[k][1]);
  } catch (e) {
    mem.userMode = user;
    throw e;
  }
  if (newCpl !== cpl) s.ss = newCpl; // a null selector with RPL = new CPL
  setCpl(cpu, s, (sel & 0xfffc) | newCpl);
  cpu.setRegAddr(4, rsp - 8 * frame.length);
  cpu.setRflags(flags & ~(TF | NT | RF | (type === 0xe ? IF : 0)));
  cpu.rip = target;
  if (vector === VEC_NMI && kind === EXT) s.nmiBlocked = true;
}

/** IRETQ (SDM vol. 2 "IRET", 64-bit mode): pops RIP CS RFLAGS RSP SS, to the same or an outer privilege level */
export function iretq(cpu: X86Cpu, s: SystemState): void {
  const mem = s.mem;
  const sp = cpu.regAddr(4);
  const ripLo = mem.read32(sp), ripHi = mem.read32(sp + 4) | 0;
  const cs = mem.read32(sp + 8) & 0xffff;
  const flags = mem.read32(sp + 16);
  const rspLo = mem.read32(sp + 24), rspHi = mem.read32(sp + 28) | 0;
  const ss = mem.read32(sp + 32) & 0xffff;
  const cpl = s.cpl, rpl = cs & 3;
  if (rpl < cpl) throw new X86Exception(VEC_GP, cs & 0xfffc, `iretq to CPL ${rpl} from CPL ${cpl}`);
  const cd = codeDescriptor(s, cs, 0);
  const conforming = (cd.type & 4) !== 0;
  if (conforming ? cd.dpl > rpl : cd.dpl !== rpl) throw new X86Exception(VEC_GP, cs & 0xfffc, `iretq: code segment 0x${cs.toString(16)} DPL ${cd.dpl} vs RPL ${rpl}`);
  if (ripHi > 0x7fff || ripHi < -0x8000) throw new X86Exception(VEC_GP, 0, 'iretq: non-canonical rip');
  if ((ss & 0xfffc) === 0) {
    if (rpl === 3) throw new X86Exception(VEC_GP, 0, 'iretq to CPL 3 with a null ss');
  } else {
    const sd = readDescriptor(s, ss);
    if ((ss & 3) !== rpl || !isWritableData(sd) || sd.dpl !== rpl) throw new X86Exception(VEC_GP, ss & 0xfffc, `iretq: ss 0x${ss.toString(16)} is not a writable data segment at RPL ${rpl}`);
    if (!sd.present) throw new X86Exception(VEC_SS, ss & 0xfffc, `iretq: ss 0x${ss.toString(16)} not present`);
  }
  // RFLAGS: IOPL only at CPL 0, IF only when CPL <= IOPL
  const old = cpu.getRflags();
  let keep = 0;
  if (cpl > 0) keep |= IOPL;
  if (cpl > ((old & IOPL) >>> 12)) keep |= IF;
  const writable = 0x3f7fd5 & ~(0x20000 | 0x80000 | 0x100000); // VM VIF VIP stay 0
  cpu.setRflags(((flags & writable & ~keep) | (old & keep) | 2) >>> 0);
  cpu.rip = ripHi * TWO32 + (ripLo >>> 0);
  setCpl(cpu, s, cs);
  s.ss = ss;
  cpu.lo[4] = rspLo | 0; cpu.hi[4] = rspHi;
  if (rpl > cpl) nullOuterSegments(cpu, s);
  s.nmiBlocked = false;
  cpu.endRun(); // IF may have been set: interrupts are looked at between runs
}

/** on a return to an outer level: DS ES FS GS holding a more privileged data or non-conforming code segment become null */
export function nullOuterSegments(cpu: X86Cpu, s: SystemState): void {
  const cpl = s.cpl;
  for (const r of [SREG_ES, SREG_DS, SREG_FS, SREG_GS]) {
    const sel = selectorOf(s, r);
    if ((sel & 0xfffc) === 0) continue;
    const d = readDescriptor(s, sel);
    if (d.dpl < cpl && !(isCode(d) && (d.type & 4) !== 0)) {
      if (r === SREG_ES) s.es = 0; else if (r === SREG_DS) s.ds = 0; else if (r === SREG_FS) s.fs = 0; else s.gs = 0;
    }
  }
}

/** what a system-mode run did */
export interface SystemRunResult {
  /** instructions retired */
  executed: number;
  /** the CPU waits in HLT for an interrupt */
  halted: boolean;
  /** the machine must stop (s.event) */
  event: SystemState['event'];
}

/** Run up to `budget` instructions: interrupts at instruction boundaries, exceptions through the IDT. */
export function runSystem(cpu: X86Cpu, s: SystemState, budget: number): SystemRunResult {
  let executed = 0;
  const irq = s.platform.irq;
  while (executed < budget && s.event === null) {
    const shadow = s.intShadow;
    s.intShadow = false;
    if (!shadow) {
      if (!s.nmiBlocked && irq.nmiPending !== undefined && irq.nmiPending()) {
        s.halted = false;
        deliver(cpu, s, VEC_NMI, -1, EXT);
        continue;
      }
      if ((cpu.otherFlags & IF) !== 0) {
        const v = irq.pendingVector();
        if (v >= 0) {
          irq.acknowledge(v);
          s.halted = false;
          deliver(cpu, s, v, -1, EXT);
          continue;
        }
      }
    }
    if (s.halted) break;
    const r = cpu.run(shadow ? 1 : budget - executed);
    executed += r.executed;
    if (r.trap !== null) takeTrap(cpu, s, r.trap);
    else if (r.executed === 0 && !s.halted && !s.intShadow) break;
  }
  return { executed, halted: s.halted, event: s.event };
}

function takeTrap(cpu: X86Cpu, s: SystemState, trap: Trap): void {
  switch (trap.kind) {
    case 'breakpoint': deliver(cpu, s, VEC_BP, -1, SOFT); return; // int3 retired: rip is after it
    case 'singleStep': case 'hwBreakpoint':
      if (trap.kind === 'hwBreakpoint' && (trap.hits >>> DEBUGGER_SLOT0) !== 0) {
        // a debugger watchpoint is a trap: the access is done and rip is past the instruction
        s.event = { kind: 'debugBreak', rip: trap.pc, detail: trap.access === 'exec' ? 'a debugger breakpoint' : `a debugger watchpoint: ${trap.access} at ${hex(trap.addr)}` };
        return;
      }
      deliver(cpu, s, VEC_DB, -1, EXC); return;
    case 'halt': s.halted = true; return;
    case 'pageFault':
      // the physical bus found nothing at a translated address (the platform maps every physical range Linux touches)
      s.event = { kind: 'busError', rip: trap.pc, detail: `${trap.access} at physical ${hex(trap.addr)}: nothing is there` };
      return;
    default: {
      const x = exceptionOf(trap);
      if (x === null) { s.event = { kind: 'unsupported', rip: trap.pc, detail: `${trap.kind} in system mode` }; return; }
      if (x.vector === VEC_UD) logUnemulated(cpu, s, trap.pc, x.unemulated);
      if (x.vector === VEC_PF && x.cr2 !== undefined) s.cr2 = x.cr2;
      deliver(cpu, s, x.vector, x.errorCode, EXC);
    }
  }
}


/**
 * A #UD that stands for something this CPU does not emulate is logged once
 * (per what, or per opcode bytes) with the rip: bytes the decoder does not
 * know (an instruction CPUID does not offer, or one nobody wrote yet), or a
 * known instruction in a form the executor refused (exception.ts
 * notEmulated). A #UD of a decoded instruction (ud2, a misplaced LOCK, a
 * system instruction at the wrong CPL's #UD cases) is the architecture's and
 * is not logged.
 */
function logUnemulated(cpu: X86Cpu, s: SystemState, pc: bigint, what: string | undefined): void {
  const at = `at rip ${hex(pc)}`;
  if (what !== undefined) { s.reportOnce(`ud:${what}`, `cpu ${cpu.id}: ${what} is not emulated: #UD ${at}`); return; }
  const rip = cpu.rip, bytes: number[] = [];
  for (let k = 0; k < MAX_INSN_LEN; k++) {
    const pa = s.mem.virtToPhys(rip + k); // without side effects (no A bits set beyond the instruction's own pages)
    if (pa === null) break;
    bytes.push(s.mem.phys.read8(pa));
  }
  let known = true;
  try { known = decodeInsn(k => { if (k >= bytes.length) throw new RangeError('past the fetchable bytes'); return bytes[k]; }, rip) !== null; } catch { known = false; }
  if (known) return;
  const text = bytes.slice(0, 4).map(b => b.toString(16).padStart(2, '0')).join(' ');
  s.reportOnce(`ud:${text}`, `cpu ${cpu.id}: no instruction this CPU emulates at bytes ${text}${bytes.length > 4 ? ' ...' : ''}: #UD ${at}`);
}
