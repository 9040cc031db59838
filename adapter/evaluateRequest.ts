/**
 * The DAP `evaluate` request over a stopped CPU: `$reg` (or a register
 * spelled gdb's way: `$rdi`, `rdi`) for a register, handler-language
 * expressions (emulator/handlers/evaluate.ts) over a StoppedCpuEnv, and
 * C names the program's DWARF knows (a parameter or local of the innermost
 * frame, a global or static: their value), bare kernel symbol names
 * without debug info (their address). Errors are answers
 * in the console, never notifications (adapter/errors.ts).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { ArchInfo, Cpu } from '../emulator/arch/types';
import type { CompileOptions } from '../emulator/handlers';
import type { KprobesEngine } from '../emulator/kprobes';
import type { Machine } from '../emulator/machine';
import { symbolAt } from '../emulator/probes';
import { formatAddress } from './disassemble';
import { evaluateExpression, formatValue, isIdentifier } from '../emulator/handlers';
import { registerVariables } from './registers';
import { ProbeStop, StoppedCpuEnv } from './stoppedEnv';
import { globalVariable, memReader } from '../emulator/debug/variables';
import type { FrameVariables } from '../emulator/debug/variables';

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
  /** the DWARF variables of the CPU's innermost frame (issue 14), when known */
  frameVariables?: () => FrameVariables | undefined;
}

export type EvaluateAnswer =
  | { ok: true; body: DebugProtocol.EvaluateResponse['body'] }
  | { ok: false; error: 'evaluateNoRegister' | 'evaluate'; message: string };

/** The pt_regs name a register spelling means on an arch (`rdi` -> `di` on x86_64), undefined when none. */
export function registerNamed(arch: ArchInfo, name: string): string | undefined {
  if (arch.regs.some(r => r.name === name)) return name;
  return arch.regAliases?.[name.toLowerCase()];
}

export function evaluateForDap(inp: EvaluateInput): EvaluateAnswer {
  const { machine: m, cpu } = inp;
  const expr = inp.expression.trim();
  // a C name the program knows (DWARF): a parameter or local of the innermost frame, else a global / static
  if (isIdentifier(expr)) {
    const fv = inp.frameVariables?.();
    const local = fv?.ok ? [...fv.params, ...fv.locals].find(x => x.name === expr) : undefined;
    const v = local ?? globalVariable(m.image, expr, memReader(cpu), cpu.getPc());
    if (v) return { ok: true, body: { result: v.value, type: v.type, variablesReference: 0 } };
  }
  const reg = /^\$(\w+)$/.exec(expr);
  const sym = isIdentifier(expr) ? m.image.symbols.lookup(expr) : undefined;
  // `$name`, or a bare register name that is no kernel symbol (gdb habits: `rdi`, `$rip`)
  const regName = reg ? registerNamed(m.arch, reg[1]) : !sym && inp.context !== 'hover' && /^\w+$/.test(expr) ? registerNamed(m.arch, expr) : undefined;
  if (reg || regName) {
    const v = regName ? registerVariables(m.arch, cpu).find(x => x.name === regName) : undefined;
    if (!v) return { ok: false, error: 'evaluateNoRegister', message: `no register ${reg ? reg[1] : expr} on ${m.arch.name} (registers: ${m.arch.regs.map(r => r.name).join(' ')})` };
    return { ok: true, body: { result: v.value, variablesReference: 0, memoryReference: v.value } };
  }
  const symbolAnswer = (s: NonNullable<typeof sym>): EvaluateAnswer => ({
    ok: true,
    body: { result: `${formatAddress(s.value)} <${s.name}>`, type: 'symbol', variablesReference: 0, memoryReference: formatAddress(s.value) },
  });
  if (sym && inp.context === 'hover') return symbolAnswer(sym);
  const env = new StoppedCpuEnv(m.kernel, inp.engine, cpu, inp.stop);
  const r = evaluateExpression(expr, env, inp.compileOptions);
  env.flush();
  if (r.ok) {
    const v = r.value;
    const body: DebugProtocol.EvaluateResponse['body'] = { result: formatValue(v, a => symbolAt(m.image, a)), type: v.typeName, variablesReference: 0 };
    if (v.type.kind === 'ptr') body.memoryReference = formatAddress(BigInt.asUintN(64, v.value));
    return { ok: true, body };
  }
  if (sym) return symbolAnswer(sym);
  const hint = registerHint(m.arch, expr);
  return { ok: false, error: 'evaluate', message: `cannot evaluate "${expr}": ${r.message}${hint}` };
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
