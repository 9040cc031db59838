/**
 * Places a handler can assign and their access: a handler local, a static,
 * a register of the probed CPU, emulated memory, a program name (DWARF)
 * wherever it is at the hit; `=`, `op=`, `++` and `--` over them, each
 * place's address evaluated once.
 */
import { Expr, Span } from './ast';
import { CType, converter, isPtr, sizeOf } from './ctypes';
import type { ExprCompiler, TE } from './exprCompiler';
import { Ev, Frame, ZERO, fault, readMem, writeMem } from './runtime';
import { ProgramPlace } from './types';

export type LV =
  | { kind: 'slot'; slot: number }
  | { kind: 'static'; slot: number }
  | { kind: 'reg'; name: string }
  | { kind: 'mem'; addr: Ev; size: number }
  /** a program name (DWARF) wherever it is when the handler runs: memory, a register, or only a value */
  | { kind: 'prog'; place: (f: Frame) => ProgramPlace; name: string };

/** get/set access to an lvalue, evaluating the address once. */
export function access(lv: LV, t: CType, span: Span): { prep: Ev; get: (f: Frame, a: bigint) => bigint; set: (f: Frame, a: bigint, v: bigint) => void } {
  const cv = converter(t);
  switch (lv.kind) {
    case 'slot': { const s = lv.slot; return { prep: ZERO, get: f => f.slots[s], set: (f, _a, v) => { f.slots[s] = v; } }; }
    case 'static': { const s = lv.slot; return { prep: ZERO, get: f => f.statics[s], set: (f, _a, v) => { f.statics[s] = v; } }; }
    case 'reg': { const n = lv.name; return { prep: ZERO, get: f => BigInt.asUintN(64, f.env.getReg(n)), set: (f, _a, v) => f.env.setReg(n, v) }; }
    case 'mem': {
      const size = lv.size as 1 | 2 | 4 | 8;
      return { prep: lv.addr, get: (f, a) => cv(readMem(f, a, size, span)), set: (f, a, v) => writeMem(f, a, size, v, span) };
    }
    case 'prog': {
      const size = Math.min(8, sizeOf(t)) as 1 | 2 | 4 | 8;
      const place = lv.place;
      return {
        prep: ZERO,
        get: f => {
          const p = place(f);
          if (p.kind === 'memory') return cv(readMem(f, p.addr, size, span));
          if (p.kind === 'register') return cv(f.env.getReg(p.reg));
          return cv(p.value);
        },
        set: (f, _a, v) => {
          const p = place(f);
          if (p.kind === 'memory') writeMem(f, p.addr, size, v, span);
          else if (p.kind === 'register') f.env.setReg(p.reg, size === 8 ? v : (BigInt.asUintN(64, f.env.getReg(p.reg)) & ~((1n << BigInt(size * 8)) - 1n)) | BigInt.asUintN(size * 8, v));
          else throw fault('context', `'${lv.name}' cannot be assigned here: the compiler left only its value, not a place`, span);
        },
      };
    }
  }
}

/** Record an assignment to a register (used / regWrites). */
function noteRegWrite(c: ExprCompiler, lv: LV, span: Span): void {
  if (lv.kind !== 'reg') return;
  c.used.add(`write:regs->${lv.name}`);
  if (!c.regWrites.has(lv.name)) c.regWrites.set(lv.name, span);
}

/** Check that r is assignable; report and return false if not. */
function assignable(c: ExprCompiler, r: TE, span: Span): r is TE & { lv: LV } {
  if (r.bad) return false;
  if (r.lv && r.lvReadonly) { c.error(span, r.lvReadonly); return false; }
  if (r.lv) return true;
  c.error(span, r.readonlyWhy ?? (r.ctx ? `cannot assign to '${r.ctx}'` : r.str !== undefined ? 'cannot assign to a string literal' : 'expression is not assignable'));
  return false;
}

export function compileAssign(c: ExprCompiler, op: string, target: Expr, value: Expr, span: Span): TE {
  const l = c.expr(target);
  const r = c.value(value);
  if (!assignable(c, l, target.span) || r.bad) return c.bad(span);
  noteRegWrite(c, l.lv, target.span);
  const acc = access(l.lv, l.t, span);
  if (op === '=') {
    const val = c.coerce(r, l.t, 'assignment');
    const { prep, set } = acc;
    return { t: l.t, ev: f => { const a = prep(f); const v = val(f); set(f, a, v); return v; }, span };
  }
  const bop = op.slice(0, -1);
  const cur: TE = { t: l.t, ev: ZERO, span: l.span };
  // Compute with a placeholder for the current value, read once through the accessor.
  let curVal = 0n;
  cur.ev = () => curVal;
  const res = c.binary(bop, cur, r, span);
  if (res.bad) return c.bad(span);
  const cv = converter(l.t);
  const { prep, get, set } = acc;
  const rev = res.ev;
  return {
    t: l.t, span, ev: f => {
      const a = prep(f);
      const saved = curVal;
      curVal = get(f, a);
      let v: bigint;
      try { v = cv(rev(f)); } finally { curVal = saved; }
      set(f, a, v);
      return v;
    },
  };
}

export function compileIncDec(c: ExprCompiler, e: Extract<Expr, { k: 'incdec' }>): TE {
  const l = c.expr(e.arg);
  if (!assignable(c, l, e.arg.span)) return c.bad(e.span);
  noteRegWrite(c, l.lv, e.arg.span);
  if (l.t.kind === 'void') { c.error(e.span, `invalid operand to '${e.op}'`); return c.bad(e.span); }
  const delta = (e.op === '++' ? 1n : -1n) * (isPtr(l.t) ? BigInt(sizeOf(l.t.to)) : 1n);
  const cv = converter(l.t);
  const { prep, get, set } = access(l.lv, l.t, e.span);
  const prefix = e.prefix;
  return {
    t: l.t, span: e.span, ev: f => {
      const a = prep(f);
      const old = get(f, a);
      const nv = cv(old + delta);
      set(f, a, nv);
      return prefix ? nv : old;
    },
  };
}
