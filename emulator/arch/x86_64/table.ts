/**
 * THE x86_64 opcode table (v86 gen/x86_table.js / QEMU decodetree idea):
 * one declarative list of encodings that feeds the executor binding, the
 * instruction-length decoder, the disassembler and the kprobes flow
 * classification.
 *
 * Opcode syntax:  [f3] [0f] XX[/n | +r | +cc] [MM]
 *   /n   ModRM.reg selects the entry (group opcodes)
 *   +r   register number in the low 3 opcode bits (+ REX.B)
 *   +cc  condition code in the low 4 bits (jcc, setcc, cmovcc)
 *   MM   exact ModRM byte (0f 01 c1 vmcall)
 *   f3   mandatory prefix (popcnt, tzcnt, lzcnt, endbr64, pause)
 * Operands use the SDM appendix-A notation: E G M (ModRM), I J (immediates),
 * Z (opcode register), AL/rAX/CL/1 fixed, X/Y string sources/destinations,
 * D (ModRM.reg debug register) with R (ModRM.rm general register; mod ignored);
 * size letters b w d q v (16/32/64 by prefix) z (immediate of at most 32
 * bits) y (32/64).
 */
import type { ExecFn, Flow, Insn, Operand, OpDef } from './insn';
import * as alu from './exec/alu';
import * as mov from './exec/mov';
import * as sh from './exec/shift';
import * as md from './exec/muldiv';
import * as ctl from './exec/control';
import * as str from './exec/string';
import * as bit from './exec/bit';
import * as sys from './exec/system';
import * as bmi from './exec/bmi';
import * as fast from './exec/fast';
import * as sse from './exec/sse';
import * as sseInt from './exec/sseInt';
import * as sseFp from './exec/sseFp';
import * as x87 from './exec/x87';
import * as priv from './exec/privileged';
import * as segq from './exec/segmentQuery';
import { fpuClassOf } from './exec/fpuGate';

// the entry types live with Insn (insn.ts), so executors never import the table
export type { Flow, Operand, OpDef } from './insn';

interface Opts {
  sub?: number; flow?: Flow; d64?: boolean; f64?: boolean; sized?: [string, string, string]; regMnem?: string;
  str?: boolean; srcSize?: number; fast?: (i: Insn) => ExecFn | undefined; lockable?: boolean;
}

function parseOps(s: string): Operand[] {
  if (!s) return [];
  return s.split(',').map(t => {
    t = t.trim();
    if (t === '1') return { k: '1', s: '' };
    if (/^(AL|CL|DX|rAX|AX|eAX)$/.test(t)) return { k: 'R', s: t === 'AL' || t === 'CL' ? 'b' : t === 'DX' ? 'w' : 'v', fixed: t };
    return { k: t[0], s: t.slice(1) };
  });
}

export const OPS: OpDef[] = [];
const NOP_CODE = '90';
function d(code: string, mnem: string, ops: string, exec: ExecFn, o: Opts = {}): void {
  OPS.push({
    code, mnem, ops: parseOps(ops), exec, sub: o.sub ?? 0, flow: o.flow ?? 'none', d64: !!o.d64, f64: !!o.f64,
    sized: o.sized, str: !!o.str, srcSize: o.srcSize, fast: o.fast, lockable: !!o.lockable, regMnem: o.regMnem,
  });
}

// ---- ALU: 00-3d and group 1 (80 81 83) -----------------------------------
const ALU_NAMES = ['add', 'or', 'adc', 'sbb', 'and', 'sub', 'xor', 'cmp'];
const fastEG = (i: Insn): ExecFn | undefined => {
  if (i.rm < 0) return fast.fastAluMR(i);
  if (i.cc === alu.ALU_ADD && i.size === 8) return alu.add64RR;
  if (i.cc === alu.ALU_ADD && i.size === 4) return alu.add32RR;
  if (i.cc === alu.ALU_CMP && i.size === 4) return alu.cmp32RR;
  return fast.fastAluRR(i);
};
const fastEI = (i: Insn): ExecFn | undefined => {
  if (i.rm < 0) return fast.fastAluMI(i);
  if (i.size === 4 && i.cc === alu.ALU_ADD) return alu.add32RI;
  if (i.size === 4 && i.cc === alu.ALU_CMP) return alu.cmp32RI;
  return fast.fastAluRI(i);
};
for (let n = 0; n < 8; n++) {
  const b = n * 8, m = ALU_NAMES[n];
  const hx = (x: number) => x.toString(16).padStart(2, '0');
  const lockable = n !== alu.ALU_CMP; // add or adc sbb and sub xor with a memory destination
  d(hx(b), m, 'Eb,Gb', alu.aluEG, { sub: n, lockable });
  d(hx(b + 1), m, 'Ev,Gv', alu.aluEG, { sub: n, fast: fastEG, lockable });
  d(hx(b + 2), m, 'Gb,Eb', alu.aluGE, { sub: n });
  d(hx(b + 3), m, 'Gv,Ev', alu.aluGE, { sub: n });
  d(hx(b + 4), m, 'AL,Ib', alu.aluEI, { sub: n });
  d(hx(b + 5), m, 'rAX,Iz', alu.aluEI, { sub: n, fast: fastEI });
  d(`80/${n}`, m, 'Eb,Ib', alu.aluEI, { sub: n, lockable });
  d(`81/${n}`, m, 'Ev,Iz', alu.aluEI, { sub: n, fast: fastEI, lockable });
  d(`83/${n}`, m, 'Ev,Ib', alu.aluEI, { sub: n, fast: fastEI, lockable });
}
d('84', 'test', 'Eb,Gb', alu.aluEG, { sub: alu.ALU_TEST });
d('85', 'test', 'Ev,Gv', alu.aluEG, { sub: alu.ALU_TEST, fast: fast.fastAluRR });
d('a8', 'test', 'AL,Ib', alu.aluEI, { sub: alu.ALU_TEST });
d('a9', 'test', 'rAX,Iz', alu.aluEI, { sub: alu.ALU_TEST });
d('f6/0', 'test', 'Eb,Ib', alu.aluEI, { sub: alu.ALU_TEST });
d('f6/1', 'test', 'Eb,Ib', alu.aluEI, { sub: alu.ALU_TEST });
d('f7/0', 'test', 'Ev,Iz', alu.aluEI, { sub: alu.ALU_TEST });
d('f7/1', 'test', 'Ev,Iz', alu.aluEI, { sub: alu.ALU_TEST });
d('f6/2', 'not', 'Eb', alu.notE, { lockable: true });
d('f7/2', 'not', 'Ev', alu.notE, { lockable: true });
d('f6/3', 'neg', 'Eb', alu.negE, { lockable: true });
d('f7/3', 'neg', 'Ev', alu.negE, { lockable: true });
d('fe/0', 'inc', 'Eb', alu.incE, { lockable: true });
d('fe/1', 'dec', 'Eb', alu.decE, { lockable: true });
d('ff/0', 'inc', 'Ev', alu.incE, { fast: fast.fastIncDec(false), lockable: true });
d('ff/1', 'dec', 'Ev', alu.decE, { fast: fast.fastIncDec(true), lockable: true });

// ---- mul / div -----------------------------------------------------------
d('f6/4', 'mul', 'Eb', md.mul1, { sub: 4 });
d('f7/4', 'mul', 'Ev', md.mul1, { sub: 4 });
d('f6/5', 'imul', 'Eb', md.mul1, { sub: 5 });
d('f7/5', 'imul', 'Ev', md.mul1, { sub: 5 });
d('f6/6', 'div', 'Eb', md.div1, { sub: 6 });
d('f7/6', 'div', 'Ev', md.div1, { sub: 6 });
d('f6/7', 'idiv', 'Eb', md.div1, { sub: 7 });
d('f7/7', 'idiv', 'Ev', md.div1, { sub: 7 });
d('0f af', 'imul', 'Gv,Ev', md.imul2, { sub: 0, fast: md.fastImul2 });
d('69', 'imul', 'Gv,Ev,Iz', md.imul2, { sub: 1 });
d('6b', 'imul', 'Gv,Ev,Ib', md.imul2, { sub: 1 });

// ---- shifts ----------------------------------------------------------------
const SH_NAMES = ['rol', 'ror', 'rcl', 'rcr', 'shl', 'shr', 'shl', 'sar'];
for (let n = 0; n < 8; n++) {
  const m = SH_NAMES[n];
  // imm2 carries the count source; the decoder sets it from the last operand
  d(`c0/${n}`, m, 'Eb,Ib', sh.shiftGroup, { sub: n });
  d(`c1/${n}`, m, 'Ev,Ib', sh.shiftGroup, { sub: n, fast: sh.fastShift });
  d(`d0/${n}`, m, 'Eb,1', sh.shiftGroup, { sub: n });
  d(`d1/${n}`, m, 'Ev,1', sh.shiftGroup, { sub: n, fast: sh.fastShift });
  d(`d2/${n}`, m, 'Eb,CL', sh.shiftGroup, { sub: n });
  d(`d3/${n}`, m, 'Ev,CL', sh.shiftGroup, { sub: n });
}
d('0f a4', 'shld', 'Ev,Gv,Ib', sh.shxd, { sub: 0, fast: sh.fastShxd });
d('0f a5', 'shld', 'Ev,Gv,CL', sh.shxd, { sub: 0 });
d('0f ac', 'shrd', 'Ev,Gv,Ib', sh.shxd, { sub: 1, fast: sh.fastShxd });
d('0f ad', 'shrd', 'Ev,Gv,CL', sh.shxd, { sub: 1 });

// ---- data movement -----------------------------------------------------------
d('88', 'mov', 'Eb,Gb', mov.movEG);
d('89', 'mov', 'Ev,Gv', mov.movEG, {
  fast: i => i.rm >= 0 ? (i.size === 8 ? mov.mov64RR : i.size === 4 ? mov.mov32RR : undefined)
    : i.size === 8 ? fast.mov64MR : i.size === 4 ? fast.mov32MR : undefined,
});
d('8a', 'mov', 'Gb,Eb', mov.movGE);
d('8b', 'mov', 'Gv,Ev', mov.movGE, {
  fast: i => i.rm >= 0 ? (i.size === 8 ? mov.mov64RR2 : i.size === 4 ? mov.mov32RR2 : undefined)
    : i.size === 8 ? mov.mov64RM : i.size === 4 ? fast.mov32RM : undefined,
});
d('c6/0', 'mov', 'Eb,Ib', mov.movEI);
d('c7/0', 'mov', 'Ev,Iz', mov.movEI, { fast: i => i.rm < 0 ? undefined : i.size === 4 ? fast.mov32RI : i.size === 8 ? fast.mov64RI : undefined });
d('b0+r', 'mov', 'Zb,Ib', mov.movEI);
d('b8+r', 'mov', 'Zv,Iv', mov.movEI, { fast: i => i.size === 4 ? fast.mov32RI : i.size === 8 ? fast.mov64RI : undefined });
d('8d', 'lea', 'Gv,M', mov.lea, { fast: i => !i.ripRel && i.size === 4 ? mov.lea32 : undefined });
d('0f b6', 'movzx', 'Gv,Eb', mov.movzx, { srcSize: 1, fast: i => i.rm < 0 && i.size >= 4 ? fast.movzx8RM : undefined });
d('0f b7', 'movzx', 'Gv,Ew', mov.movzx, { srcSize: 2 });
d('0f be', 'movsx', 'Gv,Eb', mov.movsx, { srcSize: 1 });
d('0f bf', 'movsx', 'Gv,Ew', mov.movsx, { srcSize: 2 });
d('63', 'movsxd', 'Gv,Ed', mov.movsx, { srcSize: 4 });
d('86', 'xchg', 'Eb,Gb', mov.xchg, { lockable: true });
d('87', 'xchg', 'Ev,Gv', mov.xchg, { lockable: true });
d('90+r', 'xchg', 'Zv,rAX', mov.xchg);
d('0f b0', 'cmpxchg', 'Eb,Gb', mov.cmpxchg, { lockable: true });
d('0f b1', 'cmpxchg', 'Ev,Gv', mov.cmpxchg, { lockable: true });
// cmpxchg8b m64 / cmpxchg16b m128 (REX.W): operand size 4 or 8 selects the form
d('0f c7/1', 'cmpxchg8b', 'M', mov.cmpxchgDouble, { lockable: true, sized: ['cmpxchg8b', 'cmpxchg8b', 'cmpxchg16b'] });
d('0f c0', 'xadd', 'Eb,Gb', mov.xadd, { lockable: true });
d('0f c1', 'xadd', 'Ev,Gv', mov.xadd, { lockable: true });
d('98', 'cwde', '', mov.cbwFamily, { sized: ['cbw', 'cwde', 'cdqe'] });
d('99', 'cdq', '', mov.cwdFamily, { sized: ['cwd', 'cdq', 'cqo'] });
d('0f c8+r', 'bswap', 'Zy', mov.bswap);
d('0f 40+cc', 'cmov', 'Gv,Ev', mov.cmovcc);
d('0f 90+cc', 'set', 'Eb', mov.setcc);
d('50+r', 'push', 'Zv', mov.pushR64, { d64: true });
d('58+r', 'pop', 'Zv', mov.popR64, { d64: true });
d('ff/6', 'push', 'Ev', mov.pushE, { d64: true });
d('8f/0', 'pop', 'Ev', mov.popE, { d64: true });
d('68', 'push', 'Iz', mov.pushI, { d64: true });
d('6a', 'push', 'Ib', mov.pushI, { d64: true });
d('c9', 'leave', '', mov.leave, { d64: true });
d('d7', 'xlatb', '', mov.xlat);
d('c8', 'enter', 'Iw,Ib', mov.enter, { d64: true });

// ---- control flow ---------------------------------------------------------------
const fastJcc = (i: Insn): ExecFn | undefined =>
  i.cc === 4 ? ctl.jz : i.cc === 5 ? ctl.jnz : i.cc === 12 ? ctl.jl : i.cc === 13 ? ctl.jge : undefined;
d('70+cc', 'j', 'Jb', ctl.jcc, { flow: 'condJump', f64: true, fast: fastJcc });
d('0f 80+cc', 'j', 'Jz', ctl.jcc, { flow: 'condJump', f64: true, fast: fastJcc });
d('eb', 'jmp', 'Jb', ctl.jmpRel, { flow: 'jump', f64: true });
d('e9', 'jmp', 'Jz', ctl.jmpRel, { flow: 'jump', f64: true });
d('e8', 'call', 'Jz', ctl.callRel, { flow: 'call', f64: true });
d('ff/2', 'call', 'Eq', ctl.callE, { flow: 'indirectCall', f64: true });
d('ff/4', 'jmp', 'Eq', ctl.jmpE, { flow: 'indirectJump', f64: true });
d('c3', 'ret', '', ctl.ret, { flow: 'ret', f64: true });
d('c2', 'ret', 'Iw', ctl.ret, { flow: 'ret', f64: true });
d('e0', 'loopne', 'Jb', ctl.loop, { flow: 'condJump', f64: true, sub: 0 });
d('e1', 'loope', 'Jb', ctl.loop, { flow: 'condJump', f64: true, sub: 1 });
d('e2', 'loop', 'Jb', ctl.loop, { flow: 'condJump', f64: true, sub: 2 });
d('e3', 'jrcxz', 'Jb', ctl.jrcxz, { flow: 'condJump', f64: true });

// ---- strings (67: ecx/esi/edi, bound at decode time) -------------------------------
const fastStr = (i: Insn): ExecFn | undefined => i.asize === 4 ? str.stringOp32 : undefined;
d('a4', 'movs', 'Yb,Xb', str.stringOp, { sub: str.STR_MOVS, str: true, fast: fastStr });
d('a5', 'movs', 'Yv,Xv', str.stringOp, { sub: str.STR_MOVS, str: true, fast: fastStr });
d('aa', 'stos', 'Yb,AL', str.stringOp, { sub: str.STR_STOS, str: true, fast: fastStr });
d('ab', 'stos', 'Yv,rAX', str.stringOp, { sub: str.STR_STOS, str: true, fast: fastStr });
d('ac', 'lods', 'AL,Xb', str.stringOp, { sub: str.STR_LODS, str: true, fast: fastStr });
d('ad', 'lods', 'rAX,Xv', str.stringOp, { sub: str.STR_LODS, str: true, fast: fastStr });
d('a6', 'cmps', 'Xb,Yb', str.stringOp, { sub: str.STR_CMPS, str: true, fast: fastStr });
d('a7', 'cmps', 'Xv,Yv', str.stringOp, { sub: str.STR_CMPS, str: true, fast: fastStr });
d('ae', 'scas', 'AL,Yb', str.stringOp, { sub: str.STR_SCAS, str: true, fast: fastStr });
d('af', 'scas', 'rAX,Yv', str.stringOp, { sub: str.STR_SCAS, str: true, fast: fastStr });

// ---- bit operations ------------------------------------------------------------
d('0f a3', 'bt', 'Ev,Gv', bit.btOp, { sub: bit.BT_BT });
d('0f ab', 'bts', 'Ev,Gv', bit.btOp, { sub: bit.BT_BTS, lockable: true });
d('0f b3', 'btr', 'Ev,Gv', bit.btOp, { sub: bit.BT_BTR, lockable: true });
d('0f bb', 'btc', 'Ev,Gv', bit.btOp, { sub: bit.BT_BTC, lockable: true });
d('0f ba/4', 'bt', 'Ev,Ib', bit.btOp, { sub: bit.BT_BT });
d('0f ba/5', 'bts', 'Ev,Ib', bit.btOp, { sub: bit.BT_BTS, lockable: true });
d('0f ba/6', 'btr', 'Ev,Ib', bit.btOp, { sub: bit.BT_BTR, lockable: true });
d('0f ba/7', 'btc', 'Ev,Ib', bit.btOp, { sub: bit.BT_BTC, lockable: true });
d('0f bc', 'bsf', 'Gv,Ev', bit.bsfBsr, { sub: 0 });
d('0f bd', 'bsr', 'Gv,Ev', bit.bsfBsr, { sub: 1 });
d('f3 0f bc', 'tzcnt', 'Gv,Ev', bit.tzLzcnt, { sub: 0 });
d('f3 0f bd', 'lzcnt', 'Gv,Ev', bit.tzLzcnt, { sub: 1 });
d('f3 0f b8', 'popcnt', 'Gv,Ev', bit.popcnt);

// ---- system, flags, hints ---------------------------------------------------------
d(NOP_CODE, 'nop', '', sys.nop);
d('f3 90', 'pause', '', sys.nop);
d('0f 1f/0', 'nop', 'Ev', sys.nop);
d('0f 1e', 'nop', 'Ev', sys.nop);
d('f3 0f 1e fa', 'endbr64', '', sys.nop);
d('f3 0f 1e fb', 'endbr32', '', sys.nop);
d('0f 18/0', 'prefetchnta', 'Mb', sys.nop);
d('0f 18/1', 'prefetcht0', 'Mb', sys.nop);
d('0f 18/2', 'prefetcht1', 'Mb', sys.nop);
d('0f 18/3', 'prefetcht2', 'Mb', sys.nop);
d('0f 0d/1', 'prefetchw', 'Mb', sys.nop);
d('0f ae e8', 'lfence', '', sys.nop);
d('0f ae f0', 'mfence', '', sys.nop);
d('0f ae f8', 'sfence', '', sys.nop);
d('cc', 'int3', '', sys.int3, { flow: 'trap' });
d('cd', 'int', 'Ib', sys.intN, { flow: 'trap' });
d('0f 0b', 'ud2', '', sys.ud, { flow: 'trap' });
d('0f b9', 'ud1', 'Gd,Ed', sys.ud, { flow: 'trap' });
d('0f ff', 'ud0', 'Gd,Ed', sys.ud, { flow: 'trap' });
d('f4', 'hlt', '', sys.hlt, { flow: 'halt' });
d('0f 05', 'syscall', '', sys.syscall, { flow: 'trap' });
d('0f 01 c1', 'vmcall', '', sys.vmcall, { flow: 'trap' });
d('0f 31', 'rdtsc', '', sys.rdtsc);
d('0f a2', 'cpuid', '', sys.cpuid);
d('f5', 'cmc', '', sys.cmc);
d('f8', 'clc', '', sys.clc);
d('f9', 'stc', '', sys.stc);
d('fa', 'cli', '', sys.cliSti, { sub: 0 });
d('fb', 'sti', '', sys.cliSti, { sub: 1 });
d('fc', 'cld', '', sys.cld);
d('fd', 'std', '', sys.std);
d('9e', 'sahf', '', sys.sahf);
d('9f', 'lahf', '', sys.lahf);
d('9c', 'pushfq', '', sys.pushf, { d64: true, sized: ['pushf', 'pushfq', 'pushfq'] });
d('9d', 'popfq', '', sys.popf, { d64: true, sized: ['popf', 'popfq', 'popfq'] });
// debug registers: ModRM.reg DRn, ModRM.rm the general register whatever mod says (always 64-bit)
d('0f 21', 'mov', 'Rq,Dq', sys.movFromDr);
d('0f 23', 'mov', 'Dq,Rq', sys.movToDr);
// the system half's instructions (exec/privileged.ts: #UD on a CPU without one): control registers as the debug
// registers (ModRM.reg CRn, ModRM.rm the general register), segment registers in ModRM.reg (S)
d('0f 20', 'mov', 'Rq,Cq', priv.movFromCr);
d('0f 22', 'mov', 'Cq,Rq', priv.movToCr);
d('0f 06', 'clts', '', priv.clts);
d('0f 08', 'invd', '', priv.cacheOp);
d('0f 09', 'wbinvd', '', priv.cacheOp);
d('0f 30', 'wrmsr', '', priv.wrmsr);
d('0f 32', 'rdmsr', '', priv.rdmsr);
d('0f 01 f9', 'rdtscp', '', priv.rdtscp);
d('0f 01 f8', 'swapgs', '', priv.swapgs);
d('f3 0f c7/7', 'rdpid', 'Eq', priv.rdpid);
d('0f 01/0', 'sgdt', 'M', priv.descTable, { sub: 0 });
d('0f 01/1', 'sidt', 'M', priv.descTable, { sub: 1 });
d('0f 01/2', 'lgdt', 'M', priv.descTable, { sub: 2 });
d('0f 01/3', 'lidt', 'M', priv.descTable, { sub: 3 });
d('0f 01/7', 'invlpg', 'Mb', priv.invlpg);
d('0f 00/0', 'sldt', 'Ew', priv.taskRegs, { sub: 0 });
d('0f 00/1', 'str', 'Ev', priv.taskRegs, { sub: 1 });
d('0f 00/2', 'lldt', 'Ew', priv.taskRegs, { sub: 2 });
d('0f 00/3', 'ltr', 'Ew', priv.taskRegs, { sub: 3 });
d('8c', 'mov', 'Ev,Sw', priv.movFromSreg);
d('8e', 'mov', 'Sw,Ew', priv.movToSreg);
d('cf', 'iretq', '', priv.iret, { flow: 'trap', sized: ['iret', 'iretd', 'iretq'] });
d('0f 07', 'sysretq', '', priv.sysret, { flow: 'trap', sized: ['sysret', 'sysret', 'sysretq'] });
d('cb', 'retf', '', priv.retFar, { flow: 'trap', sized: ['retfw', 'retf', 'retfq'] });
d('ca', 'retf', 'Iw', priv.retFar, { flow: 'trap', sized: ['retfw', 'retf', 'retfq'] });
for (const [c, ops] of [['e4', 'AL,Ib'], ['e5', 'eAX,Ib'], ['ec', 'AL,DX'], ['ed', 'eAX,DX']]) d(c, 'in', ops, priv.inPort);
for (const [c, ops] of [['e6', 'Ib,AL'], ['e7', 'Ib,eAX'], ['ee', 'DX,AL'], ['ef', 'DX,eAX']]) d(c, 'out', ops, priv.outPort);
// far jmp / call through an m16:16/32/64 pointer (Mp: no size shown, as llvm prints them); sysenter / sysexit (Intel's 64-bit forms)
d('ff/3', 'lcall', 'Mp', priv.farJmpCall, { flow: 'trap', sub: 1, sized: ['lcall', 'call', 'lcall'] });
d('ff/5', 'ljmp', 'Mp', priv.farJmpCall, { flow: 'trap', sub: 0, sized: ['ljmp', 'jmp', 'ljmp'] });
d('0f 34', 'sysenter', '', priv.sysenter, { flow: 'trap' });
d('0f 35', 'sysexit', '', priv.sysexit, { flow: 'trap', sized: ['sysexit', 'sysexit', 'sysexitq'] });
// descriptor queries (exec/segmentQuery.ts)
d('0f 02', 'lar', 'Gv,Ew', segq.larLsl, { sub: 0 });
d('0f 03', 'lsl', 'Gv,Ew', segq.larLsl, { sub: 1 });
d('0f 00/4', 'verr', 'Ew', segq.verrVerw, { sub: 0 });
d('0f 00/5', 'verw', 'Ew', segq.verrVerw, { sub: 1 });
d('6c', 'ins', 'Yb,DX', priv.stringIo, { str: true });
d('6d', 'ins', 'Yz,DX', priv.stringIo, { str: true });
d('6e', 'outs', 'DX,Xb', priv.stringIo, { str: true });
d('6f', 'outs', 'DX,Xz', priv.stringIo, { str: true });

export const NOP_DEF: OpDef = OPS.find(o => o.code === NOP_CODE) as OpDef;

// ---- VEX-encoded BMI1 / BMI2 (code: v<pp> <map> <opcode>) -------------------------
d('v 0f38 f2', 'andn', 'Gy,By,Ey', bmi.andn);
d('v 0f38 f3/1', 'blsr', 'By,Ey', bmi.blsx, { sub: 1 });
d('v 0f38 f3/2', 'blsmsk', 'By,Ey', bmi.blsx, { sub: 2 });
d('v 0f38 f3/3', 'blsi', 'By,Ey', bmi.blsx, { sub: 3 });
d('v 0f38 f7', 'bextr', 'Gy,Ey,By', bmi.bextr);
d('v 0f38 f5', 'bzhi', 'Gy,Ey,By', bmi.bzhi);
d('v66 0f38 f7', 'shlx', 'Gy,Ey,By', bmi.shx, { sub: 0 });
d('vf2 0f38 f7', 'shrx', 'Gy,Ey,By', bmi.shx, { sub: 1 });
d('vf3 0f38 f7', 'sarx', 'Gy,Ey,By', bmi.shx, { sub: 2 });
d('vf2 0f3a f0', 'rorx', 'Gy,Ey,Ib', bmi.rorx);
d('vf2 0f38 f5', 'pdep', 'Gy,By,Ey', bmi.pdepPext, { sub: 0 });
d('vf3 0f38 f5', 'pext', 'Gy,By,Ey', bmi.pdepPext, { sub: 1 });
d('vf2 0f38 f6', 'mulx', 'Gy,By,Ey', bmi.mulx);

/** Condition-code suffixes in encoding order (llvm spelling). */
export const CC_NAMES = ['o', 'no', 'b', 'ae', 'e', 'ne', 'be', 'a', 's', 'ns', 'p', 'np', 'l', 'ge', 'le', 'g'];

// ---- lookup structure ------------------------------------------------------------
// ---- SSE / SSE2 (exec/sse.ts): V xmm (ModRM.reg), W xmm or memory, U xmm (ModRM.rm, register only);
// mandatory prefixes select the form: none ps, 66 pd / integer, f3 ss, f2 sd
d('0f 10', 'movups', 'Vx,Wx', sse.movLoad);
d('0f 11', 'movups', 'Wx,Vx', sse.movStore);
d('66 0f 10', 'movupd', 'Vx,Wx', sse.movLoad);
d('66 0f 11', 'movupd', 'Wx,Vx', sse.movStore);
d('f3 0f 10', 'movss', 'Vx,Wd', sse.movssLoad);
d('f3 0f 11', 'movss', 'Wd,Vx', sse.movssStore);
d('f2 0f 10', 'movsd', 'Vx,Wq', sse.movsdLoad);
d('f2 0f 11', 'movsd', 'Wq,Vx', sse.movsdStore);
d('0f 28', 'movaps', 'Vx,Wx', sse.movLoad, { sub: 1 });
d('0f 29', 'movaps', 'Wx,Vx', sse.movStore, { sub: 1 });
d('66 0f 28', 'movapd', 'Vx,Wx', sse.movLoad, { sub: 1 });
d('66 0f 29', 'movapd', 'Wx,Vx', sse.movStore, { sub: 1 });
d('66 0f 6f', 'movdqa', 'Vx,Wx', sse.movLoad, { sub: 1 });
d('66 0f 7f', 'movdqa', 'Wx,Vx', sse.movStore, { sub: 1 });
d('f3 0f 6f', 'movdqu', 'Vx,Wx', sse.movLoad);
d('f3 0f 7f', 'movdqu', 'Wx,Vx', sse.movStore);
d('0f 2b', 'movntps', 'Mx,Vx', sse.movStore, { sub: 1 });
d('66 0f 2b', 'movntpd', 'Mx,Vx', sse.movStore, { sub: 1 });
d('66 0f e7', 'movntdq', 'Mx,Vx', sse.movStore, { sub: 1 });
d('0f c3', 'movnti', 'My,Gy', sse.movnti);
d('0f 12', 'movlps', 'Vx,Wq', sse.movHalfLoad, { regMnem: 'movhlps' });
d('0f 13', 'movlps', 'Mq,Vx', sse.movHalfStore);
d('66 0f 12', 'movlpd', 'Vx,Mq', sse.movHalfLoad);
d('66 0f 13', 'movlpd', 'Mq,Vx', sse.movHalfStore);
d('0f 16', 'movhps', 'Vx,Wq', sse.movHalfLoad, { sub: 1, regMnem: 'movlhps' });
d('0f 17', 'movhps', 'Mq,Vx', sse.movHalfStore, { sub: 1 });
d('66 0f 16', 'movhpd', 'Vx,Mq', sse.movHalfLoad, { sub: 1 });
d('66 0f 17', 'movhpd', 'Mq,Vx', sse.movHalfStore, { sub: 1 });
d('66 0f 6e', 'movd', 'Vx,Ey', sse.movdToX, { sized: ['movd', 'movd', 'movq'] });
d('66 0f 7e', 'movd', 'Ey,Vx', sse.movdFromX, { sized: ['movd', 'movd', 'movq'] });
d('f3 0f 7e', 'movq', 'Vx,Wq', sse.movqLoad);
d('66 0f d6', 'movq', 'Wq,Vx', sse.movqStore);
d('0f 50', 'movmskps', 'Gd,Ux', sse.movmsk, { sub: 4 });
d('66 0f 50', 'movmskpd', 'Gd,Ux', sse.movmsk, { sub: 8 });
d('66 0f d7', 'pmovmskb', 'Gd,Ux', sse.movmsk, { sub: 1 });
// floating-point arithmetic: sub = op + 16 * form
const FARITH: [number, string, number][] = [[0x58, 'add', sseFp.F_ADD], [0x59, 'mul', sseFp.F_MUL], [0x5c, 'sub', sseFp.F_SUB],
  [0x5d, 'min', sseFp.F_MIN], [0x5e, 'div', sseFp.F_DIV], [0x5f, 'max', sseFp.F_MAX], [0x51, 'sqrt', sseFp.F_SQRT]];
for (const [op, name, sub] of FARITH) {
  const hx = op.toString(16);
  d(`0f ${hx}`, `${name}ps`, 'Vx,Wx', sseFp.farith, { sub });
  d(`66 0f ${hx}`, `${name}pd`, 'Vx,Wx', sseFp.farith, { sub: sub + 16 });
  d(`f3 0f ${hx}`, `${name}ss`, 'Vx,Wd', sseFp.farith, { sub: sub + 32 });
  d(`f2 0f ${hx}`, `${name}sd`, 'Vx,Wq', sseFp.farith, { sub: sub + 48 });
}
for (const [op, name, sub] of [[0x54, 'and', 0], [0x55, 'andn', 1], [0x56, 'or', 2], [0x57, 'xor', 3]] as [number, string, number][]) {
  d(`0f ${op.toString(16)}`, `${name}ps`, 'Vx,Wx', sseFp.flogic, { sub });
  d(`66 0f ${op.toString(16)}`, `${name}pd`, 'Vx,Wx', sseFp.flogic, { sub });
}
d('0f c2', 'cmpps', 'Vx,Wx,Ib', sseFp.fcmp, { sub: 0 });
d('66 0f c2', 'cmppd', 'Vx,Wx,Ib', sseFp.fcmp, { sub: 1 });
d('f3 0f c2', 'cmpss', 'Vx,Wd,Ib', sseFp.fcmp, { sub: 2 });
d('f2 0f c2', 'cmpsd', 'Vx,Wq,Ib', sseFp.fcmp, { sub: 3 });
d('0f 2e', 'ucomiss', 'Vx,Wd', sseFp.fcomi, { sub: 0 });
d('0f 2f', 'comiss', 'Vx,Wd', sseFp.fcomi, { sub: 1 });
d('66 0f 2e', 'ucomisd', 'Vx,Wq', sseFp.fcomi, { sub: 2 });
d('66 0f 2f', 'comisd', 'Vx,Wq', sseFp.fcomi, { sub: 3 });
d('0f c6', 'shufps', 'Vx,Wx,Ib', sseInt.shufp, { sub: 0 });
d('66 0f c6', 'shufpd', 'Vx,Wx,Ib', sseInt.shufp, { sub: 1 });
d('0f 14', 'unpcklps', 'Vx,Wx', sseInt.unpack, { sub: 4 });
d('0f 15', 'unpckhps', 'Vx,Wx', sseInt.unpack, { sub: 4 + 16 });
d('66 0f 14', 'unpcklpd', 'Vx,Wx', sseInt.unpack, { sub: 8 });
d('66 0f 15', 'unpckhpd', 'Vx,Wx', sseInt.unpack, { sub: 8 + 16 });
// conversions
d('f3 0f 2a', 'cvtsi2ss', 'Vx,Ey', sseFp.cvtSiTo, { sub: 0 });
d('f2 0f 2a', 'cvtsi2sd', 'Vx,Ey', sseFp.cvtSiTo, { sub: 1 });
d('f3 0f 2c', 'cvttss2si', 'Gy,Wd', sseFp.cvtToSi, { sub: 2 });
d('f2 0f 2c', 'cvttsd2si', 'Gy,Wq', sseFp.cvtToSi, { sub: 3 });
d('f3 0f 2d', 'cvtss2si', 'Gy,Wd', sseFp.cvtToSi, { sub: 0 });
d('f2 0f 2d', 'cvtsd2si', 'Gy,Wq', sseFp.cvtToSi, { sub: 1 });
d('f3 0f 5a', 'cvtss2sd', 'Vx,Wd', sseFp.cvtFF, { sub: 0 });
d('f2 0f 5a', 'cvtsd2ss', 'Vx,Wq', sseFp.cvtFF, { sub: 1 });
d('0f 5a', 'cvtps2pd', 'Vx,Wq', sseFp.cvtFF, { sub: 2 });
d('66 0f 5a', 'cvtpd2ps', 'Vx,Wx', sseFp.cvtFF, { sub: 3 });
d('0f 5b', 'cvtdq2ps', 'Vx,Wx', sseFp.cvtPacked, { sub: 0 });
d('66 0f 5b', 'cvtps2dq', 'Vx,Wx', sseFp.cvtPacked, { sub: 1 });
d('f3 0f 5b', 'cvttps2dq', 'Vx,Wx', sseFp.cvtPacked, { sub: 2 });
d('f3 0f e6', 'cvtdq2pd', 'Vx,Wq', sseFp.cvtPacked, { sub: 3 });
d('f2 0f e6', 'cvtpd2dq', 'Vx,Wx', sseFp.cvtPacked, { sub: 4 });
d('66 0f e6', 'cvttpd2dq', 'Vx,Wx', sseFp.cvtPacked, { sub: 5 });
// integer SIMD (66 0f xx)
const PINT: [number, string, number][] = [
  [0xfc, 'paddb', sseInt.PADDB], [0xfd, 'paddw', sseInt.PADDW], [0xfe, 'paddd', sseInt.PADDD], [0xd4, 'paddq', sseInt.PADDQ],
  [0xf8, 'psubb', sseInt.PSUBB], [0xf9, 'psubw', sseInt.PSUBW], [0xfa, 'psubd', sseInt.PSUBD], [0xfb, 'psubq', sseInt.PSUBQ],
  [0xec, 'paddsb', sseInt.PADDSB], [0xed, 'paddsw', sseInt.PADDSW], [0xdc, 'paddusb', sseInt.PADDUSB], [0xdd, 'paddusw', sseInt.PADDUSW],
  [0xe8, 'psubsb', sseInt.PSUBSB], [0xe9, 'psubsw', sseInt.PSUBSW], [0xd8, 'psubusb', sseInt.PSUBUSB], [0xd9, 'psubusw', sseInt.PSUBUSW],
  [0x74, 'pcmpeqb', sseInt.PCMPEQB], [0x75, 'pcmpeqw', sseInt.PCMPEQW], [0x76, 'pcmpeqd', sseInt.PCMPEQD],
  [0x64, 'pcmpgtb', sseInt.PCMPGTB], [0x65, 'pcmpgtw', sseInt.PCMPGTW], [0x66, 'pcmpgtd', sseInt.PCMPGTD],
  [0xda, 'pminub', sseInt.PMINUB], [0xde, 'pmaxub', sseInt.PMAXUB], [0xea, 'pminsw', sseInt.PMINSW], [0xee, 'pmaxsw', sseInt.PMAXSW],
  [0xe0, 'pavgb', sseInt.PAVGB], [0xe3, 'pavgw', sseInt.PAVGW], [0xd5, 'pmullw', sseInt.PMULLW], [0xe5, 'pmulhw', sseInt.PMULHW],
  [0xe4, 'pmulhuw', sseInt.PMULHUW], [0xdb, 'pand', sseInt.PAND], [0xdf, 'pandn', sseInt.PANDN], [0xeb, 'por', sseInt.POR], [0xef, 'pxor', sseInt.PXOR],
];
for (const [op, name, sub] of PINT) d(`66 0f ${op.toString(16)}`, name, 'Vx,Wx', sseInt.pint, { sub });
d('66 0f f4', 'pmuludq', 'Vx,Wx', sseInt.pmuludq);
d('66 0f f5', 'pmaddwd', 'Vx,Wx', sseInt.pmaddwd);
d('66 0f f6', 'psadbw', 'Vx,Wx', sseInt.psadbw);
// shifts: sub = lane bytes + 16 * kind (0 left, 1 right logical, 2 right arithmetic)
for (const [op, name, sub] of [[0xf1, 'psllw', 2], [0xf2, 'pslld', 4], [0xf3, 'psllq', 8], [0xd1, 'psrlw', 18], [0xd2, 'psrld', 20],
  [0xd3, 'psrlq', 24], [0xe1, 'psraw', 34], [0xe2, 'psrad', 36]] as [number, string, number][]) {
  d(`66 0f ${op.toString(16)}`, name, 'Vx,Wx', sseInt.shiftX, { sub });
}
d('66 0f 71/2', 'psrlw', 'Ux,Ib', sseInt.shiftI, { sub: 18 });
d('66 0f 71/4', 'psraw', 'Ux,Ib', sseInt.shiftI, { sub: 34 });
d('66 0f 71/6', 'psllw', 'Ux,Ib', sseInt.shiftI, { sub: 2 });
d('66 0f 72/2', 'psrld', 'Ux,Ib', sseInt.shiftI, { sub: 20 });
d('66 0f 72/4', 'psrad', 'Ux,Ib', sseInt.shiftI, { sub: 36 });
d('66 0f 72/6', 'pslld', 'Ux,Ib', sseInt.shiftI, { sub: 4 });
d('66 0f 73/2', 'psrlq', 'Ux,Ib', sseInt.shiftI, { sub: 24 });
d('66 0f 73/3', 'psrldq', 'Ux,Ib', sseInt.shiftBytes, { sub: 0 });
d('66 0f 73/6', 'psllq', 'Ux,Ib', sseInt.shiftI, { sub: 8 });
d('66 0f 73/7', 'pslldq', 'Ux,Ib', sseInt.shiftBytes, { sub: 1 });
// unpacks and packs
for (const [op, name, sub] of [[0x60, 'punpcklbw', 1], [0x61, 'punpcklwd', 2], [0x62, 'punpckldq', 4], [0x6c, 'punpcklqdq', 8],
  [0x68, 'punpckhbw', 17], [0x69, 'punpckhwd', 18], [0x6a, 'punpckhdq', 20], [0x6d, 'punpckhqdq', 24]] as [number, string, number][]) {
  d(`66 0f ${op.toString(16)}`, name, 'Vx,Wx', sseInt.unpack, { sub });
}
d('66 0f 63', 'packsswb', 'Vx,Wx', sseInt.pack, { sub: 0 });
d('66 0f 67', 'packuswb', 'Vx,Wx', sseInt.pack, { sub: 1 });
d('66 0f 6b', 'packssdw', 'Vx,Wx', sseInt.pack, { sub: 2 });
d('66 0f 70', 'pshufd', 'Vx,Wx,Ib', sseInt.pshuf, { sub: 0 });
d('f2 0f 70', 'pshuflw', 'Vx,Wx,Ib', sseInt.pshuf, { sub: 1 });
d('f3 0f 70', 'pshufhw', 'Vx,Wx,Ib', sseInt.pshuf, { sub: 2 });
d('66 0f c5', 'pextrw', 'Gd,Ux,Ib', sseInt.pextrw);
d('66 0f c4', 'pinsrw', 'Vx,Ed,Ib', sseInt.pinsrw);
// state
d('0f ae/0', 'fxsave', 'M', sse.fxsave);
d('0f ae/1', 'fxrstor', 'M', sse.fxrstor);
d('0f ae/2', 'ldmxcsr', 'Md', sse.ldmxcsr);
d('0f ae/3', 'stmxcsr', 'Md', sse.stmxcsr);
d('0f ae/7', 'clflush', 'Mb', sys.nop);
// x87 control and status words (exec/x87.ts)
d('d9/7', 'fnstcw', 'Mw', x87.fnstcw);
d('d9/5', 'fldcw', 'Mw', x87.fldcw);
d('dd/7', 'fnstsw', 'Mw', x87.fnstsw, { sub: 0 });
d('df e0', 'fnstsw', 'AX', x87.fnstsw, { sub: 1 });
d('db e3', 'fninit', '', x87.finit);
// x87 (exec/x87.ts): long double as C libraries use it
const ST_ARITH = ['fadd', 'fmul', 'fcom', 'fcomp', 'fsub', 'fsubr', 'fdiv', 'fdivr'];
for (let r = 0; r < 8; r++) {
  d(`d8/${r}`, ST_ARITH[r], 'Md', x87.arithMem, { sub: 4 });
  d(`dc/${r}`, ST_ARITH[r], 'Mq', x87.arithMem, { sub: 8 });
  d(`da/${r}`, `fi${ST_ARITH[r].slice(1)}`, 'Md', x87.arithMem, { sub: -4 });
  d(`de/${r}`, `fi${ST_ARITH[r].slice(1)}`, 'Mw', x87.arithMem, { sub: 2 });
  for (let k = 0; k < 8; k++) {
    const m = (0xc0 | (r << 3) | k).toString(16);
    d(`d8 ${m}`, ST_ARITH[r], '', x87.arithReg, { sub: 0 });
    if (r !== 2 && r !== 3) {
      // DC / DE: st(i) op st0; the SDM names e0 fsubr, e8 fsub, f0 fdivr, f8 fdiv
      const name = r === 4 ? 'fsubr' : r === 5 ? 'fsub' : r === 6 ? 'fdivr' : r === 7 ? 'fdiv' : ST_ARITH[r];
      d(`dc ${m}`, name, '', x87.arithReg, { sub: 1 });
      d(`de ${m}`, `${name}p`, '', x87.arithReg, { sub: 2 });
    }
  }
}
for (let k = 0; k < 8; k++) {
  const h = (b: number): string => (b | k).toString(16);
  d(`d9 ${h(0xc0)}`, 'fld', '', x87.fldReg);
  d(`d9 ${h(0xc8)}`, 'fxch', '', x87.fxch);
  d(`dd ${h(0xd0)}`, 'fst', '', x87.fstReg, { sub: 0 });
  d(`dd ${h(0xd8)}`, 'fstp', '', x87.fstReg, { sub: 1 });
  d(`db ${h(0xe8)}`, 'fucomi', '', x87.fcomi, { sub: 0 });
  d(`db ${h(0xf0)}`, 'fcomi', '', x87.fcomi, { sub: 0 });
  d(`df ${h(0xe8)}`, 'fucomip', '', x87.fcomi, { sub: 1 });
  d(`df ${h(0xf0)}`, 'fcomip', '', x87.fcomi, { sub: 1 });
}
d('d9/0', 'fld', 'Md', x87.fldMem, { sub: 4 });
d('dd/0', 'fld', 'Mq', x87.fldMem, { sub: 8 });
d('db/5', 'fld', 'M', x87.fldMem, { sub: 10 });
d('df/0', 'fild', 'Mw', x87.fldMem, { sub: 2 });
d('db/0', 'fild', 'Md', x87.fldMem, { sub: -4 });
d('df/5', 'fild', 'Mq', x87.fldMem, { sub: -8 });
d('d9/2', 'fst', 'Md', x87.fstMem, { sub: 4 });
d('d9/3', 'fstp', 'Md', x87.fstMem, { sub: 4 + 16 });
d('dd/2', 'fst', 'Mq', x87.fstMem, { sub: 8 });
d('dd/3', 'fstp', 'Mq', x87.fstMem, { sub: 8 + 16 });
d('db/7', 'fstp', 'M', x87.fstMem, { sub: 10 + 16 });
d('df/2', 'fist', 'Mw', x87.fstMem, { sub: 2 });
d('df/3', 'fistp', 'Mw', x87.fstMem, { sub: 2 + 16 });
d('db/2', 'fist', 'Md', x87.fstMem, { sub: 12 });
d('db/3', 'fistp', 'Md', x87.fstMem, { sub: 12 + 16 });
d('df/7', 'fistp', 'Mq', x87.fstMem, { sub: 13 + 16 });
d('d9 e0', 'fchs', '', x87.unary, { sub: 0 });
d('d9 e1', 'fabs', '', x87.unary, { sub: 1 });
d('d9 fc', 'frndint', '', x87.unary, { sub: 2 });
d('d9 f8', 'fprem', '', x87.unary, { sub: 3 });
d('d9 e4', 'ftst', '', x87.unary, { sub: 4 });
d('d9 e5', 'fxam', '', x87.fxam);
d('d9 e8', 'fld1', '', x87.fldConst, { sub: 1 });
d('d9 ee', 'fldz', '', x87.fldConst, { sub: 0 });
d('de d9', 'fcompp', '', x87.fcompp);
d('da e9', 'fucompp', '', x87.fcompp);
d('9b', 'wait', '', sys.nop);

export interface Slot {
  plain?: OpDef;
  group?: (OpDef | undefined)[];
  exact?: Map<number, OpDef>;
  /** entries selected by a mandatory prefix (SSE: f3 ss, f2 sd, 66 pd / integer xmm) */
  f3?: Slot;
  f2?: Slot;
  p66?: Slot;
  needModrm: boolean;
  /** opcode carries a register (+r) or condition code (+cc) in its low bits */
  low?: 'r' | 'cc';
}

export const ONE_BYTE: (Slot | undefined)[] = new Array(256);
/** VEX opcode maps, keyed `${pp}:${map}:${opcode}` (pp: 0 none, 1 66, 2 f3, 3 f2; map: 1 0f, 2 0f38, 3 0f3a) */
export const VEX = new Map<string, Slot>();
const VEX_PP: Record<string, number> = { v: 0, v66: 1, vf3: 2, vf2: 3 };
const VEX_MAP: Record<string, number> = { '0f': 1, '0f38': 2, '0f3a': 3 };
export const TWO_BYTE: (Slot | undefined)[] = new Array(256);

function usesModrm(def: OpDef): boolean {
  return def.ops.some(o => 'EGMVWUDCS'.includes(o.k));
}

function install(def: OpDef): void {
  if (def.code === NOP_CODE) return; // 90 without REX.B: chosen by the decoder over xchg
  const parts = def.code.split(' ');
  if (parts[0] in VEX_PP) {
    const m = /^([0-9a-f]{2})(?:\/([0-7]))?$/.exec(parts[2]);
    if (!m || !(parts[1] in VEX_MAP)) throw new Error(`x86 table: bad VEX opcode ${def.code}`);
    const key = `${VEX_PP[parts[0]]}:${VEX_MAP[parts[1]]}:${parseInt(m[1], 16)}`;
    let slot = VEX.get(key);
    if (!slot) { slot = { needModrm: true }; VEX.set(key, slot); }
    if (m[2] !== undefined) { if (!slot.group) slot.group = new Array(8); slot.group[Number(m[2])] = def; }
    else slot.plain = def;
    return;
  }
  let mandatory: 'f3' | 'f2' | 'p66' | undefined;
  if ((parts[0] === 'f3' || parts[0] === 'f2' || parts[0] === '66') && parts.length > 1) {
    mandatory = parts[0] === '66' ? 'p66' : parts[0];
    parts.shift();
  }
  let map = ONE_BYTE;
  if (parts[0] === '0f' && parts.length > 1) { map = TWO_BYTE; parts.shift(); }
  const m = /^([0-9a-f]{2})(?:\/([0-7])|\+(r|cc))?$/.exec(parts[0]);
  if (!m) throw new Error(`x86 table: bad opcode ${def.code}`);
  const base = parseInt(m[1], 16);
  const exact = parts[1] !== undefined ? parseInt(parts[1], 16) : undefined;
  const count = m[3] === 'r' ? 8 : m[3] === 'cc' ? 16 : 1;
  for (let k = 0; k < count; k++) {
    let slot = map[base + k];
    if (!slot) { slot = { needModrm: false }; map[base + k] = slot; }
    if (mandatory) {
      if (!slot[mandatory]) slot[mandatory] = { needModrm: false };
      slot = slot[mandatory]!;
    }
    if (m[3]) slot.low = m[3] as 'r' | 'cc';
    if (exact !== undefined) {
      if (!slot.exact) slot.exact = new Map();
      slot.exact.set(exact, def);
      slot.needModrm = true;
    } else if (m[2] !== undefined) {
      if (!slot.group) slot.group = new Array(8);
      slot.group[Number(m[2])] = def;
      slot.needModrm = true;
    } else {
      if (slot.plain) throw new Error(`x86 table: duplicate opcode ${def.code}`);
      slot.plain = def;
      if (usesModrm(def)) slot.needModrm = true;
    }
  }
}
for (const def of OPS) { def.fpu = fpuClassOf(def); install(def); }
