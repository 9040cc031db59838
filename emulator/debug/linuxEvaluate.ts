/**
 * The debugger's evaluate (Debug Console, Watch, hover) on the Linux
 * machine: one C expression of the handler language (emulator/handlers
 * evaluate) over a stopped CPU, as on the sample kernel machine
 * (./evaluate.ts), with memory through that CPU's page tables
 * (./linuxEvalEnv.ts). Names, innermost scope first:
 *   1. the parameters and locals of the frame asked for (an inlined call's
 *      own), their locations evaluated with that frame's registers;
 *   2. `current`: the task on this CPU (struct task_struct *, from its
 *      per-CPU current_task), every member readable (`current->mm->...`);
 *   3. the globals and statics of the frame's program: a launch module's
 *      DWARF when the frame is in one, then the vmlinux's, found by name
 *      through the DWARF name index (never enumerated; a vmlinux's
 *      enumerators are not looked for: that would read every unit); a per-CPU variable
 *      (its DW_OP_addr an offset in .data..percpu) is this CPU's copy;
 *   4. the handler language's own names (`jiffies`, `regs->di` for the
 *      frame's registers, `symbol("name")`...).
 * Types for casts and sizeof: the frame's program's, then the vmlinux's.
 * A vmlinux the debugger was not given, an unknown name, a member a type
 * does not have: an error saying what is not known where.
 */
import { archByName } from '../arch/registry';
import type { DwarfOrigin } from '../elf/dwarf/ctype';
import { debugInfoOf } from '../elf/dwarf/info';
import { nameIndex } from '../elf/dwarf/nameIndex';
import { namesAt } from '../elf/dwarf/scopes';
import type { ElfImage } from '../elf/types';
import { evaluateExpression, formatValue, type CompileOptions, type ProgramName } from '../handlers';
import { ptrTo, type CType } from '../handlers/ctypes';
import { programGlobals, programNamesAt, programTypes } from '../probes/programNames';
import { PT_REGS_ROWS } from './linuxInspect';
import { LinuxEvalEnv } from './linuxEvalEnv';
import type { LinuxTarget } from './linuxTarget';
import { aggregateValue, type Expandable } from './variables';

/** what an evaluation shows: its text, C type, an expandable value (a struct / array, the struct a pointer points to), the memory it points at */
export interface LinuxEvalBody {
  result: string;
  type: string;
  expand?: Expandable;
  /** the struct a pointer points to (expand is the pointee) */
  viaPointer?: boolean;
  memoryReference?: string;
}

export type LinuxEvalAnswer = { ok: true; body: LinuxEvalBody } | { ok: false; message: string };

const hex = (a: bigint): string => `0x${BigInt.asUintN(64, a).toString(16)}`;

/** the x86_64 per-CPU section's size when it is linked at 0 (its symbols are offsets into each CPU's copy) */
function perCpuSize(image: ElfImage): bigint | undefined {
  const s = image.sections.find(x => x.name === '.data..percpu');
  return s && s.addr === 0n ? BigInt(s.size) : undefined;
}

/** the registers of physical frame `p` by pt_regs name: all of the innermost (the probed context at a guest kprobe's hit), sp/bp/ip of a caller */
function frameRegs(t: LinuxTarget, cpu: number, p: number, lookupPc: bigint): Map<string, bigint> {
  const regs = new Map<string, bigint>();
  if (p === 0) {
    for (const r of t.registers(cpu)) {
      const name = r.name === 'rip' ? 'ip' : PT_REGS_ROWS[r.name];
      if (name !== undefined && /^0x[0-9a-f]+$/i.test(r.value)) regs.set(name, BigInt(r.value));
    }
    return regs;
  }
  const f = t.frames(cpu)[p];
  if (f) {
    regs.set('sp', f.sp);
    if (f.bp !== undefined) regs.set('bp', f.bp);
  }
  regs.set('ip', lookupPc);
  return regs;
}

/** the first of several lookups that knows a name */
function firstOf<A extends unknown[], R>(fs: readonly (((...a: A) => R | undefined) | undefined)[]): (...a: A) => R | undefined {
  return (...a: A) => {
    for (const f of fs) { const r = f?.(...a); if (r !== undefined) return r; }
    return undefined;
  };
}

/** Evaluate `expr` in shown frame `k` of stopped CPU `cpu`. Never throws. */
export function linuxEvaluate(t: LinuxTarget, cpu: number, k: number, expr: string): LinuxEvalAnswer {
  const vm = t.vmlinux;
  if (!vm) return { ok: false, message: 'C expressions need the kernel\'s DWARF: set "vmlinux" in launch.json' };
  const arch = archByName('x86_64');
  if (!arch) return { ok: false, message: 'no x86_64 architecture description' };
  const shown = t.shownFrames(cpu);
  const s = shown[k];
  if (!s && shown.length > 0) return { ok: false, message: `CPU ${cpu} has no frame ${k}` };
  const pc = s?.lookupPc ?? t.pc(cpu);
  const physical = s?.physical ?? 0;
  const where = `frame ${k} (${s?.name ?? t.where(pc)}) of CPU ${cpu}`;
  const image = t.debugImage(pc) ?? vm;
  const pages = t.pages(cpu);
  const base = t.perCpuBase(cpu);
  const task = t.tasks?.current(pages, base);
  const env = new LinuxEvalEnv({
    vmlinux: vm, pages, cpu, regs: frameRegs(t, cpu, physical, pc), frame: where, task,
    write: (a, d) => t.writeMemory(cpu, a, d),
  });

  // 1. the frame's parameters and locals (programNamesAt also answers globals: only its scoped names are taken here)
  // (asked only for the names in scope: another name would be looked for among every unit's enumerators)
  let scoped: ((n: string) => ProgramName | undefined) | undefined;
  try {
    const at = { inlineDepth: s?.inlineDepth, skipInlineEntry: s?.skipInlineEntry };
    const inScope = new Set(namesAt(image, pc, at)?.names.keys() ?? []);
    const names = programNamesAt(image, arch, pc, at);
    scoped = names ? (n => (inScope.has(n) ? names(n) : undefined)) : undefined;
  } catch { scoped = undefined; }
  // 2. current: the task on this CPU
  const types = firstOf<['struct' | 'union' | 'enum' | 'typedef', string], CType>([programTypes(image), image === vm ? undefined : programTypes(vm)]);
  const current = (n: string): ProgramName | undefined => {
    if (n !== 'current') return undefined;
    const ts = types('struct', 'task_struct');
    if (!ts) return undefined;
    if (!task) return { unavailable: `(the task on CPU ${cpu}) is not known: its per-CPU current_task cannot be read yet`, scoped: true };
    const value = task.address;
    return { type: ptrTo(ts), what: `the task on CPU ${cpu}`, scoped: true, place: () => ({ kind: 'value', value }) };
  };
  // 3. globals: the frame's program's, then the vmlinux's; per-CPU ones at this CPU's copy
  const size = perCpuSize(vm);
  const vmGlobals = programGlobals(vm, image === vm ? pc : undefined);
  // only a name the vmlinux's name index holds as a variable (not found, programGlobals would walk every unit for an enumerator)
  const vmVariables = nameIndex(debugInfoOf(vm)).variables;
  const perCpu = (n: string): ProgramName | undefined => {
    const g = vmVariables.has(n) ? vmGlobals(n) : undefined;
    if (!g || 'unavailable' in g || size === undefined) return g;
    const place = g.place;
    return {
      ...g,
      place: e => {
        const p = place(e);
        if (p.kind !== 'memory' || p.addr < 0n || p.addr >= size) return p;
        if (base === 0n) throw new Error(`a per-CPU variable, and CPU ${cpu}'s per-CPU area is not set up yet (its GS base is 0)`);
        return { kind: 'memory', addr: BigInt.asUintN(64, base + p.addr) };
      },
    };
  };
  const opts: CompileOptions = {
    regNames: arch.regs.map(r => r.name), arch: 'x86_64', charSigned: true,
    symbolExists: n => vm.symbols.lookup(n) !== undefined,
    programName: firstOf<[string], ProgramName>([scoped, current, image === vm ? undefined : programGlobals(image, pc), perCpu]),
    programType: types,
    programWritable: true,
    programScopeFirst: true,
  };

  const r = evaluateExpression(expr, env, opts);
  if (!r.ok) return { ok: false, message: `cannot evaluate "${expr.trim()}" in ${where}: ${r.message}` };
  const v = r.value;
  const symbolize = (a: bigint): string | undefined => {
    const w = t.where(a);
    return w.startsWith('0x') ? undefined : w;
  };
  const body: LinuxEvalBody = { result: formatValue(v, symbolize), type: v.typeName };
  if (v.type.kind === 'ptr') body.memoryReference = hex(v.value);
  // the program's structs and arrays: gdb's text, expandable; a pointer to a struct expands to the struct
  const origin = (ty: CType): DwarfOrigin | undefined => ((ty.kind === 'struct' || ty.kind === 'array') ? ty.origin as DwarfOrigin | undefined : undefined);
  const agg = v.aggregate ? origin(v.type) : undefined;
  const pointee = v.type.kind === 'ptr' && v.value !== 0n ? origin(v.type.to) : undefined;
  if (agg && v.text === undefined) {
    const x: Expandable = { image: agg.image, type: agg.die, addr: BigInt.asUintN(64, v.value) };
    try { body.result = aggregateValue(x, t.memReader(cpu)); } catch (e) { body.result = `<error: ${(e as Error).message}>`; }
    body.memoryReference = hex(x.addr);
    body.expand = x;
  } else if (pointee && pointee.die.tag !== 0x01) {
    body.expand = { image: pointee.image, type: pointee.die, addr: BigInt.asUintN(64, v.value) };
    body.viaPointer = true;
  }
  return { ok: true, body };
}
