/** Compilation of builtin function calls (see builtins.ts for the list and docs). */
import { Expr, Span } from './ast';
import { BUILTINS } from './builtins';
import { CType, T, isPtr, ptrTo, typeName } from './ctypes';
import { ExprCompiler, TE } from './exprCompiler';
import { formatArgKinds, formatPrintk } from './printk';
import { Ev, Frame, MAX_STRING, chargeSteps, fault, internDynamic, readCString, readMem, step } from './runtime';
import { PrintkEnv, ProbeControlOp } from './types';

type CallExpr = Extract<Expr, { k: 'call' }>;

/** Thrown by jprobe_return() to end the body; caught by the compiled handler's run(). */
export const JPROBE_RETURN = Symbol('jprobe_return');

const MAX_MEMCMP = 65536n;

/**
 * A builtin that prints is charged by the text it adds to the kernel log, as
 * the string builtins are by the bytes they read: one step per 8 bytes on
 * top of the statement's own step. A loop of dump_stack() / long printk()s thus
 * meets the step budget after a bounded amount of output (about 8 bytes per
 * step of the budget) instead of one step per call.
 */
function chargeOutput(f: Frame, bytes: number, span: Span): void {
  chargeSteps(f, bytes >> 3, span);
}

function printkEnv(f: Frame, span: Span): PrintkEnv {
  const env = f.env;
  return {
    readCString: (a, max) => readCString(f, a, max, span),
    addrToSymbol: env.addrToSymbol ? a => env.addrToSymbol?.(a) : undefined,
  };
}

function arity(c: ExprCompiler, e: CallExpr, min: number, max: number): boolean {
  const n = e.args.length;
  if (n < min || n > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    c.error(e.span, `${e.callee}() takes ${want} argument${want === '1' ? '' : 's'}, ${n} given`);
    return false;
  }
  return true;
}

function stringArg(c: ExprCompiler, a: Expr, fn: string): TE {
  const r = c.value(a);
  if (!r.bad && !isPtr(r.t)) c.error(r.span, `argument of ${fn}() must be a string (char *), not '${typeName(r.t)}'`);
  return r;
}

export function compileCall(c: ExprCompiler, e: CallExpr): TE {
  const span = e.span;
  const bad = (): TE => c.bad(span);
  const mk = (t: CType, ev: Ev): TE => ({ t, ev, span });
  switch (e.callee) {
    case 'printk': case 'pr_info': case 'pr_warn': case 'pr_err': {
      if (!arity(c, e, 1, Infinity)) { e.args.forEach(a => c.expr(a)); return bad(); }
      const fmt = stringArg(c, e.args[0], e.callee);
      const args = e.args.slice(1).map(a => c.value(a));
      if (fmt.bad || args.some(a => a.bad)) return bad();
      if (fmt.str !== undefined) {
        const { kinds, invalid } = formatArgKinds(fmt.str);
        for (const s of invalid) c.warn(fmt.span, `unknown conversion '${fmt.str.slice(s.start, s.end)}' in the format (printed as is)`);
        if (kinds.length !== args.length) {
          c.warn(args.length > kinds.length ? args[kinds.length].span : fmt.span,
            `the format expects ${kinds.length} argument${kinds.length === 1 ? '' : 's'} but ${args.length} ${args.length === 1 ? 'is' : 'are'} given`);
        }
        kinds.forEach((k, i) => {
          const a = args[i];
          if (!a) return;
          if (k === 'str' && !isPtr(a.t)) c.warn(a.span, `%s expects a string (char *), but the argument has type '${typeName(a.t)}'`);
          if (k === 'int' && isPtr(a.t)) c.warn(a.span, `integer conversion given a pointer '${typeName(a.t)}' (use %p or %lx)`);
        });
      }
      const litFmt = fmt.str;
      const fev = fmt.ev;
      const evs = args.map(a => a.ev);
      return mk(T.int, f => {
        const text = litFmt ?? readCString(f, fev(f), 1024, span);
        const vals = evs.map(ev => ev(f));
        const out = formatPrintk(text, vals, printkEnv(f, span));
        f.env.printk(out);
        chargeOutput(f, out.length, span);
        return BigInt(out.length);
      });
    }
    case 'dump_stack':
      if (!arity(c, e, 0, 0)) return bad();
      return mk(T.void, f => { chargeOutput(f, f.env.dumpStack() ?? 0, span); return 0n; });
    case 'ktime_get':
      if (!arity(c, e, 0, 0)) return bad();
      return mk({ ...T.s64, name: 'ktime_t' }, f => BigInt.asIntN(64, f.env.ktimeGet()));
    case 'ktime_get_ns':
      if (!arity(c, e, 0, 0)) return bad();
      return mk(T.u64, f => BigInt.asUintN(64, f.env.ktimeGet()));
    case 'ktime_to_ns': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = c.intValue(e.args[0], 'ktime_to_ns()');
      const x = a.ev;
      return mk(T.s64, f => BigInt.asIntN(64, x(f)));
    }
    case 'ktime_sub': {
      if (!arity(c, e, 2, 2)) return bad();
      const a = c.intValue(e.args[0], 'ktime_sub()'), b = c.intValue(e.args[1], 'ktime_sub()');
      const x = a.ev, y = b.ev;
      return mk({ ...T.s64, name: 'ktime_t' }, f => BigInt.asIntN(64, x(f) - y(f)));
    }
    case 'regs_return_value': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = c.expr(e.args[0]);
      if (!a.bad && a.ctx !== 'regs') { c.error(a.span, 'regs_return_value() takes the handler\'s regs'); return bad(); }
      return mk(T.ulong, f => BigInt.asUintN(64, f.env.regsReturnValue()));
    }
    case 'smp_processor_id':
      if (!arity(c, e, 0, 0)) return bad();
      return mk(T.int, f => BigInt.asIntN(32, BigInt(f.env.smpProcessorId())));
    case 'symbol': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = c.expr(e.args[0]);
      if (a.bad) return bad();
      if (a.str === undefined) { c.error(a.span, 'symbol() takes a string literal, e.g. symbol("do_fork")'); return bad(); }
      const name = a.str;
      if (c.o.symbolExists && !c.o.symbolExists(name)) { c.error(a.span, `unknown symbol '${name}' in the image`); return bad(); }
      return mk(T.ulong, f => BigInt.asUintN(64, f.env.symbol(name) ?? 0n));
    }
    case 'user_string': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = c.value(e.args[0]);
      if (!a.bad && !isPtr(a.t)) c.error(a.span, `argument of user_string() must be a pointer, not '${typeName(a.t)}'`);
      const x = a.ev;
      return mk(ptrTo(T.char), f => {
        let s: string;
        try { s = f.env.readCString(BigInt.asUintN(64, x(f)), MAX_STRING); } catch { s = '(fault)'; }
        f.steps += s.length >> 3;
        step(f, span);
        return internDynamic(f, s);
      });
    }
    case 'get_user': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = c.value(e.args[0]);
      if (!a.bad && !isPtr(a.t)) c.error(a.span, `argument of get_user() must be a pointer, not '${typeName(a.t)}'`);
      const x = a.ev;
      return mk(T.ulong, f => {
        try { return BigInt.asUintN(64, f.env.readMem(BigInt.asUintN(64, x(f)), 8)); } catch { return 0n; }
      });
    }
    case 'strlen': {
      if (!arity(c, e, 1, 1)) return bad();
      const a = stringArg(c, e.args[0], 'strlen');
      const x = a.ev;
      return mk(T.ulong, f => {
        const s = readCString(f, x(f), MAX_STRING, span);
        f.steps += s.length >> 3;
        step(f, span);
        return BigInt(s.length);
      });
    }
    case 'strcmp': case 'strncmp': {
      const n3 = e.callee === 'strncmp';
      if (!arity(c, e, n3 ? 3 : 2, n3 ? 3 : 2)) return bad();
      const a = stringArg(c, e.args[0], e.callee), b = stringArg(c, e.args[1], e.callee);
      const n = n3 ? c.intValue(e.args[2], 'strncmp()') : undefined;
      const x = a.ev, y = b.ev, z = n?.ev;
      return mk(T.int, f => {
        const lim = z ? Number(BigInt.asUintN(64, z(f)) > BigInt(MAX_STRING) ? BigInt(MAX_STRING) : BigInt.asUintN(64, z(f))) : MAX_STRING;
        const s1 = readCString(f, x(f), lim, span), s2 = readCString(f, y(f), lim, span);
        f.steps += (s1.length + s2.length) >> 3;
        step(f, span);
        for (let i = 0; i < lim; i++) {
          const c1 = i < s1.length ? s1.charCodeAt(i) & 0xff : 0, c2 = i < s2.length ? s2.charCodeAt(i) & 0xff : 0;
          if (c1 !== c2) return c1 < c2 ? -1n : 1n;
          if (c1 === 0) break;
        }
        return 0n;
      });
    }
    case 'memcmp': {
      if (!arity(c, e, 3, 3)) return bad();
      const a = c.value(e.args[0]), b = c.value(e.args[1]);
      for (const r of [a, b]) if (!r.bad && !isPtr(r.t)) c.error(r.span, `argument of memcmp() must be a pointer, not '${typeName(r.t)}'`);
      const n = c.intValue(e.args[2], 'memcmp()');
      const x = a.ev, y = b.ev, z = n.ev;
      return mk(T.int, f => {
        const cnt = BigInt.asUintN(64, z(f));
        if (cnt > MAX_MEMCMP) throw fault('memory', `memcmp() of ${cnt} bytes exceeds the limit of ${MAX_MEMCMP}`, span);
        const p = x(f), q = y(f);
        f.steps += Number(cnt) >> 3;
        step(f, span);
        for (let i = 0n; i < cnt; i++) {
          const c1 = readMem(f, BigInt.asUintN(64, p + i), 1, span), c2 = readMem(f, BigInt.asUintN(64, q + i), 1, span);
          if (c1 !== c2) return c1 - c2;
        }
        return 0n;
      });
    }
    case 'unregister_kprobe': case 'disable_kprobe': case 'enable_kprobe':
    case 'unregister_kretprobe': case 'disable_kretprobe': case 'enable_kretprobe': {
      if (!arity(c, e, 1, 1)) { e.args.forEach(a => c.expr(a)); return bad(); }
      const ret = e.callee.endsWith('kretprobe');
      const a = c.expr(e.args[0]);
      if (a.bad) return bad();
      if (!ret && (c.o.kind === 'entry' || c.o.kind === 'return')) {
        c.error(e.calleeSpan, `a kretprobe handler controls its return probe: use ${e.callee.replace('kprobe', 'kretprobe')}(ri->rp)`);
        return bad();
      }
      const want = ret ? 'rp' : 'p';
      if (a.ctx !== want) {
        c.error(a.span, ret ? `${e.callee}() takes this handler's return probe, ri->rp` : `${e.callee}() takes this handler's probe, p`);
        return bad();
      }
      const op = e.callee.slice(0, e.callee.indexOf('_')) as ProbeControlOp;
      const kind = ret ? 'kretprobe' : 'kprobe';
      return mk(T.int, f => {
        const ctl = f.env.probeControl;
        if (!ctl) throw fault('context', `${e.callee}() is not available here (only in probe handlers)`, span);
        return BigInt(ctl.call(f.env, op, kind));
      });
    }
    case 'jprobe_return':
      if (!arity(c, e, 0, 0)) return bad();
      if (c.o.kind !== 'jprobe') { c.error(e.calleeSpan, 'jprobe_return() is only allowed in a jprobe body'); return bad(); }
      return mk(T.void, () => { throw JPROBE_RETURN; });
  }
  // a function of the image, called on the probed CPU
  if (c.o.functionExists?.(e.callee)) return imageCall(c, e);
  e.args.forEach(a => c.expr(a));
  const known = BUILTINS.map(b => b.name);
  const close = known.find(k => k.toLowerCase() === e.callee.toLowerCase() || (k.startsWith(e.callee) && e.callee.length >= 3));
  c.error(e.calleeSpan, `unknown function '${e.callee}'${close ? ` (did you mean ${close}()?)` : ''}: not a builtin (${known.join(', ')}) nor a function of the image`);
  return bad();
}

/** Most register arguments any port passes (x86_64 6, arm64 / riscv64 8); the port's own limit is checked at the call. */
const MAX_CALL_ARGS = 8;

/**
 * A call of an image function: integer or pointer arguments in the arch's
 * argument registers, the result as `long`. Runs on the probed CPU (the
 * engine's nested call); its instructions count as handler steps (the step
 * budget, the CPU's virtual time). Failures (no such function at run time,
 * too many arguments for the arch, a fault or no return) are 'context'
 * faults of the call.
 */
function imageCall(c: ExprCompiler, e: CallExpr): TE {
  const span = e.span;
  if (e.args.length > MAX_CALL_ARGS) {
    e.args.forEach(a => c.expr(a));
    c.error(e.span, `${e.callee}(): at most ${MAX_CALL_ARGS} arguments can be passed in registers, ${e.args.length} given`);
    return c.bad(span);
  }
  const args = e.args.map(a => c.value(a));
  if (args.some(a => a.bad)) return c.bad(span);
  const evs = args.map(a => a.ev);
  const name = e.callee;
  return {
    t: T.long, span,
    ev: f => {
      const call = f.env.callFunction;
      if (!call) throw fault('context', `calling ${name}() is not available here (only in probe handlers)`, span);
      const vals = evs.map(ev => BigInt.asUintN(64, ev(f)));
      step(f, span);
      let r: { value: bigint; instructions: number };
      try {
        r = call.call(f.env, name, vals);
      } catch (err) {
        throw fault('context', `${name}(): ${err instanceof Error ? err.message : String(err)}`, span);
      }
      f.steps += r.instructions;
      if (f.steps > f.budget) throw fault('budget', `${name}() ran ${r.instructions} instructions: the handler's step budget of ${f.budget} is exceeded`, span);
      return BigInt.asIntN(64, r.value);
    },
  };
}
