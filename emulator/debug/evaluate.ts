/**
 * An expression over a stopped CPU, as a debugger's watch, hover and
 * console evaluate it: `$reg` (or a register spelled gdb's way: `$rdi`,
 * `rdi`) for a register, handler-language expressions
 * (emulator/handlers/evaluate.ts) over a StoppedCpuEnv, and C names the
 * program's DWARF knows (a parameter or local of the frame asked for, a
 * global or static: their value), bare kernel symbol names without debug
 * info (their address). The names are those of the program the frame is
 * in (a module's code: the module's DWARF), then the globals of the
 * kernel and the loaded modules. A failure is an answer with its message.
 */
import type { ArchInfo, Cpu } from '../arch/types';
import type { CompileOptions } from '../handlers';
import type { KprobesEngine } from '../kprobes';
import type { Machine } from '../machine';
import { symbolAt } from '../probes';
import { handlerCodeAt } from '../probes/handlerBreakpoints';
import { formatAddress } from './addresses';
import { evaluateExpression, formatValue, isIdentifier } from '../handlers';
import { registerRows } from './registers';
import { StoppedCpuEnv } from './stoppedEnv';
import type { ProbeStop } from './stoppedEnv';
import { aggregateValue, globalVariable, memReader } from './variables';
import { inModule } from './frames';
import type { Expandable, FrameState, FrameVariables } from './variables';
import type { DwarfOrigin } from '../elf/dwarf/ctype';
import type { ElfImage } from '../elf/types';
import { dwarfRegName, programGlobals, programNamesAt, programTypes } from '../probes/programNames';

export interface EvaluateInput {
  machine: Machine;
  engine: KprobesEngine;
  compileOptions: CompileOptions;
  cpu: Cpu;
  /** the breakpoint probe the CPU is stopped at */
  stop?: ProbeStop;
  expression: string;
  /** DAP context: watch, repl, hover, clipboard... */
  context?: string;
  /** the DWARF variables of the frame asked for (the names an expression may use), when known */
  frameVariables?: () => FrameVariables | undefined;
  /** the frame asked for: its index (0 = innermost) and registers as the CFI recovers them */
  frame?: { index: number; state: FrameState };
  /** a reference for an expandable value (a struct / array in memory, a pointer to a struct); 0 when none */
  expandRef?: (x: Expandable, viaPointer: boolean) => number;
  /** the program the frame is in when not the kernel image (a user task's frame: its ELF and DWARF) */
  image?: ElfImage;
}

/** What an evaluation shows: its text, its C type, an expandable value's reference, the memory it points at. */
export interface EvaluateBody {
  result: string;
  type?: string;
  variablesReference: number;
  memoryReference?: string;
}

export type EvaluateAnswer =
  | { ok: true; body: EvaluateBody }
  | { ok: false; error: 'evaluateNoRegister' | 'evaluate'; message: string };

/** The pt_regs name a register spelling means on an arch (`rdi` -> `di` on x86_64), undefined when none. */
export function registerNamed(arch: ArchInfo, name: string): string | undefined {
  if (arch.regs.some(r => r.name === name)) return name;
  return arch.regAliases?.[name.toLowerCase()];
}

/**
 * The program a frame is in: the image given (a user program's), else the
 * debug image of the loaded module whose code holds the frame's pc, else
 * the kernel's.
 */
export function frameImageOf(inp: Pick<EvaluateInput, 'machine' | 'cpu' | 'frame' | 'image'>): ElfImage {
  if (inp.image) return inp.image;
  const pc = inp.frame?.state.pc ?? inp.cpu.getPc();
  return inp.machine.loadedModules()?.find(x => inModule(x, pc))?.debugImage?.() ?? inp.machine.image;
}

/**
 * The other programs whose globals a kernel-side frame's expression may
 * name, as gdb with the modules' symbol files added: the kernel and every
 * loaded module with debug info, the frame's own left out (a user
 * program's frame sees its own only).
 */
function otherImagesOf(inp: Pick<EvaluateInput, 'machine' | 'image'>, own: ElfImage): ElfImage[] {
  if (inp.image) return [];
  const all = [inp.machine.image, ...(inp.machine.loadedModules() ?? []).map(x => x.debugImage?.())];
  return all.filter((x): x is ElfImage => x !== undefined && x !== own);
}

export function evaluate(inp: EvaluateInput): EvaluateAnswer {
  const { machine: m, cpu } = inp;
  const image = frameImageOf(inp);
  const expr = inp.expression.trim();
  // a C name the program knows (DWARF): a parameter or local of the innermost frame, else a global / static
  // (the frame's program first, then the kernel's and the loaded modules')
  if (isIdentifier(expr)) {
    const fv = inp.frameVariables?.();
    const local = fv?.ok ? [...fv.params, ...fv.locals].find(x => x.name === expr) : undefined;
    const read = memReader(cpu);
    let v = local ?? globalVariable(image, expr, read, inp.frame?.state.pc ?? cpu.getPc());
    for (const o of v ? [] : otherImagesOf(inp, image)) if ((v = globalVariable(o, expr, read))) break;
    if (v) return { ok: true, body: { result: v.value, type: v.type, variablesReference: v.expand && inp.expandRef ? inp.expandRef(v.expand, / \*$/.test(v.type)) : 0 } };
  }
  const reg = /^\$(\w+)$/.exec(expr);
  const sym = isIdentifier(expr) ? image.symbols.lookup(expr) : undefined;
  // `$name`, or a bare register name that is no kernel symbol (gdb habits: `rdi`, `$rip`)
  const regName = reg ? registerNamed(m.arch, reg[1]) : !sym && inp.context !== 'hover' && /^\w+$/.test(expr) ? registerNamed(m.arch, expr) : undefined;
  if (reg || regName) {
    const v = regName ? registerRows(m.arch, cpu).find(x => x.name === regName) : undefined;
    if (!v) return { ok: false, error: 'evaluateNoRegister', message: `no register ${reg ? reg[1] : expr} on ${m.arch.name} (registers: ${m.arch.regs.map(r => r.name).join(' ')})` };
    return { ok: true, body: { result: v.value, variablesReference: 0, memoryReference: v.value } };
  }
  const symbolAnswer = (s: NonNullable<typeof sym>): EvaluateAnswer => ({
    ok: true,
    body: { result: `${formatAddress(s.value)} <${s.name}>`, type: 'symbol', variablesReference: 0, memoryReference: formatAddress(s.value) },
  });
  if (sym && inp.context === 'hover') return symbolAnswer(sym);
  const r = evaluateInFrame(inp, expr);
  if (r.ok) {
    const v = r.value;
    const body: EvaluateBody = { result: formatValue(v, a => symbolAt(image, a)), type: v.typeName, variablesReference: 0 };
    if (v.type.kind === 'ptr') body.memoryReference = formatAddress(BigInt.asUintN(64, v.value));
    // the program's structs and arrays: gdb's text, expandable; a pointer to a struct expands to the struct
    const origin = (t: typeof v.type): DwarfOrigin | undefined => ((t.kind === 'struct' || t.kind === 'array') ? t.origin as DwarfOrigin | undefined : undefined);
    const agg = v.aggregate ? origin(v.type) : undefined;
    const pointee = v.type.kind === 'ptr' && v.value !== 0n ? origin(v.type.to) : undefined;
    if (agg && v.text === undefined) {
      const x: Expandable = { image: agg.image, type: agg.die, addr: BigInt.asUintN(64, v.value) };
      body.result = aggregateValue(x, memReader(cpu));
      body.memoryReference = formatAddress(x.addr);
      if (inp.expandRef) body.variablesReference = inp.expandRef(x, false);
    } else if (pointee && pointee.die.tag !== 0x01 && inp.expandRef) {
      body.variablesReference = inp.expandRef({ image: pointee.image, type: pointee.die, addr: BigInt.asUintN(64, v.value) }, true);
    }
    return { ok: true, body };
  }
  if (sym) return symbolAnswer(sym);
  const hint = registerHint(m.arch, expr);
  return { ok: false, error: 'evaluate', message: `cannot evaluate "${expr}": ${r.message}${hint}` };
}

/**
 * Run a handler-language expression in the frame asked for: the program's
 * names (DWARF) in scope at that frame's pc, its globals and types, all
 * assignable (the debugger may change the program); in a caller frame the
 * registers are those the call frame information recovers.
 */
export function evaluateInFrame(inp: EvaluateInput, expr: string): ReturnType<typeof evaluateExpression> {
  const { env, opts } = frameContext(inp);
  const r = evaluateExpression(expr, env, opts);
  env.flush();
  return r;
}

/**
 * What an expression sees in the frame asked for: the stopped CPU's
 * environment (a caller frame's registers as the CFI recovers them) and the
 * compile options naming the program's DWARF names in scope at its pc.
 */
export function frameContext(inp: Omit<EvaluateInput, 'expression'>): { env: StoppedCpuEnv; opts: CompileOptions } {
  const { machine: m, cpu } = inp;
  const image = frameImageOf(inp);
  const st = inp.frame?.state;
  let callerRegs: Map<string, bigint> | undefined;
  if (st && (st.level ?? 0) > 0) {
    callerRegs = new Map();
    for (const [d, v] of st.regs) {
      const name = dwarfRegName(m.arch, d);
      if (name) callerRegs.set(name, v);
    }
    const pcName = m.arch.regs[m.arch.abi.pcReg]?.name;
    if (pcName) callerRegs.set(pcName, st.pc + 1n);
  }
  const env = new StoppedCpuEnv(m.kernel, inp.engine, cpu, inp.stop, callerRegs);
  const pc = st?.pc ?? cpu.getPc();
  let names: ReturnType<typeof programNamesAt> | undefined;
  try { names = programNamesAt(image, m.arch, pc, { inlineDepth: st?.inlineDepth, skipInlineEntry: st?.skipInlineEntry }); } catch { names = undefined; }
  const own = names ?? programGlobals(image, pc);
  const others = otherImagesOf(inp, image);
  const otherGlobals = others.map(o => programGlobals(o));
  const ownTypes = programTypes(image);
  const otherTypes = others.map(o => programTypes(o));
  const opts: CompileOptions = {
    ...inp.compileOptions,
    // the frame's names, then the globals of the kernel and the loaded modules (a module's counter from a kernel frame)
    programName: others.length === 0 ? own : (n: string) => {
      const v = own(n);
      if (v) return v;
      for (const g of otherGlobals) { const w = g(n); if (w) return w; }
      return undefined;
    },
    programType: others.length === 0 ? ownTypes : (kind, n) => {
      const t = ownTypes(kind, n);
      if (t) return t;
      for (const f of otherTypes) { const u = f(kind, n); if (u) return u; }
      return undefined;
    },
    programWritable: true,
    // a kprobe handler's frame (a module's pre handler...): its own p and regs, the probe being handled and its
    // registers, as the Variables view shows them, before the context names (the debugger's breakpoint probe there)
    programScopeFirst: inHandlerCode(inp, pc),
  };
  return { env, opts };
}

/** whether pc is in code that runs inside a kprobe handler (a C handler registered by a module, or its module's code) */
function inHandlerCode(inp: Omit<EvaluateInput, 'expression'>, pc: bigint): boolean {
  try { return handlerCodeAt(inp.machine.kernel, inp.engine, pc) !== undefined; } catch { return false; }
}

/** " (registers are regs->di here)" when the expression names a register without regs->. */
function registerHint(arch: ArchInfo, expr: string): string {
  for (const id of expr.match(/\$?[A-Za-z_]\w*/g) ?? []) {
    if (/->\s*$/.test(expr.slice(0, expr.indexOf(id)))) continue;
    const r = registerNamed(arch, id.replace(/^\$/, ''));
    if (r) return ` (registers are regs->${r} here, or $${r})`;
  }
  return '';
}
