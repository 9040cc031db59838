/**
 * Type-checks expressions and compiles them to closures over a Frame.
 * C integer semantics: values are bigints in the canonical form of their
 * static type (see ctypes.ts); every operator converts its result to its
 * C result type, so wrap-around happens at the declared width.
 *
 * Decisions where C leaves behaviour undefined:
 * - shift counts are taken modulo the promoted left operand's width (what
 *   x86 shift instructions do); left shifts of signed values wrap;
 * - x / 0, x % 0 and INT_MIN / -1 are 'divide' faults (x86 raises #DE);
 * - signed overflow wraps (gcc -fwrapv, as the kernel builds).
 *
 * What a name means (locals, the handler's context names and fields, the
 * program's DWARF names) is in names.ts; the places that can be assigned
 * and `=`, `op=`, `++`, `--` over them are in lvalues.ts.
 */
import { Expr, MAX_NESTING, Span, nestingMessage } from './ast';
import { ContextName } from './context';
import { CType, IntType, StructType, T, converter, findMember, isAggregate, isCharPtr, isInt, isPtr, promote, ptrTo, sameType, sizeOf, typeName, usualArith } from './ctypes';
import { LV, compileAssign, compileIncDec } from './lvalues';
import { compileName, contextMember, placeAddress } from './names';
import { diagAt } from './parser';
import { Ev, Frame, StringPool, ZERO, fault, readMem } from './runtime';
import { Diagnostic, HandlerKind, ProgramName } from './types';

export interface TE {
  t: CType;
  ev: Ev;
  span: Span;
  lv?: LV;
  /** a context object (regs, p, ri, current): not a value by itself */
  ctx?: 'regs' | 'p' | 'ri' | 'current' | 'rp';
  /** string literal text */
  str?: string;
  /** integer constant value (literals and constant folding of casts/unary minus) */
  constant?: bigint;
  /** why this is not assignable */
  readonlyWhy?: string;
  /** an lvalue (its address can be taken) that may not be assigned, and why */
  lvReadonly?: string;
  /** already reported an error: suppress follow-up diagnostics */
  bad?: boolean;
}

/** a variable: a per-run slot, or (`static`) a slot that keeps its value across runs of the handler */
interface Local { slot: number; type: CType; isStatic?: boolean }

export interface ExprCompilerOptions {
  kind: HandlerKind;
  regNames: readonly string[];
  argRegs: readonly string[];
  context: readonly ContextName[];
  symbolExists?: (name: string) => boolean;
  /** a function symbol of the image (calls of it run on the probed CPU) */
  functionExists?: (name: string) => boolean;
  /** DWARF names of the program at the probe's pc */
  programName?: (name: string) => ProgramName | undefined;
  /** the program's types by name (DWARF) */
  programType?: (kind: 'struct' | 'union' | 'enum' | 'typedef', name: string) => CType | undefined;
  /** program names may be assigned (the debugger), else they are read-only (handlers) */
  programWritable?: boolean;
  /** parameters and locals of the program before the context names (CompileOptions.programScopeFirst) */
  programScopeFirst?: boolean;
  charSigned: boolean;
}

export class ExprCompiler {
  readonly scopes: Map<string, Local>[] = [new Map()];
  nslots = 0;
  /** static variables: slots of the compiled handler's persistent store, with their constant initial values */
  readonly statics: bigint[] = [];
  /** context fields the snippet uses, e.g. 'ri->data', 'regs->ip' */
  readonly used = new Set<string>();
  /** registers the snippet assigns (=, op=, ++, --), with the first assignment's target */
  readonly regWrites = new Map<string, Span>();

  constructor(readonly o: ExprCompilerOptions, readonly diags: Diagnostic[], readonly lits: StringPool) {}

  error(span: Span, msg: string): void { this.diags.push(diagAt(span, msg)); }
  warn(span: Span, msg: string): void { this.diags.push(diagAt(span, msg, 'warning')); }

  bad(span: Span): TE { return { t: T.int, ev: ZERO, span, bad: true }; }

  lookup(name: string): Local | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const l = this.scopes[i].get(name);
      if (l) return l;
    }
    return undefined;
  }

  has(c: ContextName): boolean { return this.o.context.includes(c); }

  /** An expression used for its value: must be a scalar. */
  value(e: Expr): TE {
    const r = this.expr(e);
    if (r.bad) return r;
    if (r.ctx) { this.error(r.span, `'${r.ctx}' is a structure pointer, not a value here; use ${r.ctx}->field`); return this.bad(r.span); }
    if (r.t.kind === 'void') { this.error(r.span, 'void value used where a value is required'); return this.bad(r.span); }
    if (r.t.kind === 'array') return { t: ptrTo(r.t.of), ev: r.ev, span: r.span }; // an array is the address of its first element
    if (r.t.kind === 'struct') {
      this.error(r.span, `'${typeName(r.t)}' is not a value here; use one of its members (.${r.t.members()[0]?.name || 'member'}) or its address (&)`);
      return this.bad(r.span);
    }
    return r;
  }

  /** An expression for the debugger: a scalar value, or a struct / union / array (its address, typed). */
  valueOrAggregate(e: Expr): TE {
    const r = this.expr(e);
    if (!r.bad && !r.ctx && isAggregate(r.t)) return r;
    if (r.bad) return r;
    if (r.ctx) { this.error(r.span, `'${r.ctx}' is a structure pointer, not a value here; use ${r.ctx}->field`); return this.bad(r.span); }
    if (r.t.kind === 'void') { this.error(r.span, 'void value used where a value is required'); return this.bad(r.span); }
    return r;
  }

  /** An integer operand. */
  intValue(e: Expr, what: string): TE & { t: IntType } {
    const r = this.value(e);
    if (!r.bad && !isInt(r.t)) { this.error(r.span, `${what} needs an integer operand, not '${typeName(r.t)}'`); return { ...this.bad(r.span), t: T.int }; }
    return r as TE & { t: IntType };
  }

  /** Convert a value to type `to` for assignment / argument passing, warning like C compilers do. */
  coerce(r: TE, to: CType, what: string): Ev {
    if (!r.bad && to.kind !== 'void') {
      if (isPtr(to) && isInt(r.t) && r.constant !== 0n) this.warn(r.span, `${what} makes pointer '${typeName(to)}' from integer '${typeName(r.t)}' without a cast`);
      else if (isInt(to) && isPtr(r.t) && !to.bool) this.warn(r.span, `${what} makes integer '${typeName(to)}' from pointer '${typeName(r.t)}' without a cast`);
      else if (isPtr(to) && isPtr(r.t) && to.to.kind !== 'void' && r.t.to.kind !== 'void' && !sameType(to, r.t) && r.str === undefined) {
        this.warn(r.span, `${what}: incompatible pointer types '${typeName(to)}' and '${typeName(r.t)}'`);
      }
    }
    const cv = converter(to);
    const ev = r.ev;
    return f => cv(ev(f));
  }

  /** Nesting level of the tree being compiled: bounded by MAX_NESTING like the parser's. */
  protected nesting = 0;

  /** Past MAX_NESTING (a tree the parser did not build): a positioned error instead of a stack overflow. */
  protected tooDeep(span: Span, what: 'statement' | 'expression'): boolean {
    if (this.nesting <= MAX_NESTING) return false;
    this.error(span, nestingMessage(what));
    return true;
  }

  expr(e: Expr): TE {
    this.nesting++;
    try {
      return this.tooDeep(e.span, 'expression') ? this.bad(e.span) : this.exprNode(e);
    } finally { this.nesting--; }
  }

  private exprNode(e: Expr): TE {
    switch (e.k) {
      case 'error': return this.bad(e.span);
      case 'num': { const v = e.value; const cv = converter(e.type)(v); return { t: e.type, ev: () => cv, span: e.span, constant: cv }; }
      case 'str': {
        const addr = this.lits.intern(e.value);
        return { t: ptrTo(T.char), ev: () => addr, span: e.span, str: e.value };
      }
      case 'ident': return compileName(this, e.name, e.span);
      case 'member': return this.member(e);
      case 'index': {
        const a = this.value(e.obj), b = this.value(e.index);
        if (a.bad || b.bad) return this.bad(e.span);
        const [ptr, idx] = isPtr(a.t) ? [a, b] : [b, a];
        if (!isPtr(ptr.t) || !isInt(idx.t)) { this.error(e.span, `subscripted value must be a pointer indexed by an integer (have '${typeName(a.t)}' and '${typeName(b.t)}')`); return this.bad(e.span); }
        return this.deref(this.ptrAdd(ptr, idx, '+', e.span), e.span);
      }
      case 'call': return this.call(e);
      case 'unary': return this.unary(e);
      case 'incdec': return compileIncDec(this, e);
      case 'cast': {
        const r = this.expr(e.arg);
        if (r.bad) return { ...this.bad(e.span), t: e.type };
        if (r.ctx) { this.error(e.arg.span, `cannot cast the structure '${r.ctx}'; cast a field such as ${r.ctx}->${r.ctx === 'regs' ? (this.o.regNames[0] ?? 'ip') : 'addr'}`); return this.bad(e.span); }
        if (e.type.kind === 'void') { const ev = r.ev; return { t: T.void, ev: f => { ev(f); return 0n; }, span: e.span }; }
        if (isAggregate(e.type)) { this.error(e.span, `cannot cast to '${typeName(e.type)}'; cast to a pointer and dereference: *(${typeName(e.type)} *)addr`); return this.bad(e.span); }
        if (r.t.kind === 'array') { const cva = converter(e.type), eva = r.ev; return { t: e.type, ev: f => cva(eva(f)), span: e.span }; }
        if (r.t.kind === 'struct') { this.error(e.arg.span, `cannot cast '${typeName(r.t)}' to '${typeName(e.type)}'; take its address: (${typeName(e.type)})&x`); return this.bad(e.span); }
        if (r.t.kind === 'void') { this.error(e.arg.span, 'void value cannot be cast to a non-void type'); return this.bad(e.span); }
        const cv = converter(e.type);
        const ev = r.ev;
        return { t: e.type, ev: f => cv(ev(f)), span: e.span, constant: r.constant !== undefined ? cv(r.constant) : undefined };
      }
      case 'sizeof': {
        let size: number;
        if (e.type) size = sizeOf(e.type);
        else {
          const mark = this.diags.length;
          const r = this.expr(e.arg!);
          if (r.ctx) { this.diags.length = mark; this.error(e.span, `sizeof(struct ${r.ctx === 'regs' ? 'pt_regs' : r.ctx}) is not available`); return this.bad(e.span); }
          size = sizeOf(r.t);
        }
        const v = BigInt(size);
        return { t: T.ulong, ev: () => v, span: e.span, constant: v };
      }
      case 'binary': return this.binary(e.op, this.value(e.left), this.value(e.right), e.span);
      case 'logical': {
        const a = this.scalar(e.left), b = this.scalar(e.right);
        const x = a.ev, y = b.ev;
        const ev: Ev = e.op === '&&' ? f => (x(f) !== 0n && y(f) !== 0n ? 1n : 0n) : f => (x(f) !== 0n || y(f) !== 0n ? 1n : 0n);
        return { t: T.int, ev, span: e.span, bad: a.bad || b.bad };
      }
      case 'assign': return compileAssign(this, e.op, e.target, e.value, e.span);
      case 'cond': {
        const c = this.scalar(e.test);
        const a = this.expr(e.then), b = this.expr(e.else);
        if (a.bad || b.bad || c.bad) return this.bad(e.span);
        let t: CType;
        if (a.t.kind === 'void' && b.t.kind === 'void') t = T.void;
        else if (isInt(a.t) && isInt(b.t)) t = usualArith(a.t, b.t);
        else if (isPtr(a.t) && isPtr(b.t)) t = a.t.to.kind === 'void' ? b.t : a.t;
        else if (isPtr(a.t) && b.constant === 0n) t = a.t;
        else if (isPtr(b.t) && a.constant === 0n) t = b.t;
        else { this.error(e.span, `the branches of ?: have incompatible types '${typeName(a.t)}' and '${typeName(b.t)}'`); return this.bad(e.span); }
        if (a.ctx || b.ctx) { this.error(e.span, 'context structures cannot be selected with ?:'); return this.bad(e.span); }
        const cv = converter(t);
        const x = c.ev, y = a.ev, z = b.ev;
        return { t, ev: f => cv(x(f) !== 0n ? y(f) : z(f)), span: e.span };
      }
      case 'comma': {
        const a = this.expr(e.left), b = this.expr(e.right);
        const x = a.ev, y = b.ev;
        return { ...b, ev: f => { x(f); return y(f); }, lv: undefined, constant: undefined, span: e.span, bad: a.bad || b.bad };
      }
    }
  }

  /** A value tested for truth (scalar). */
  scalar(e: Expr): TE {
    return this.value(e);
  }

  private member(e: Extract<Expr, { k: 'member' }>): TE {
    const obj = this.expr(e.obj);
    if (obj.bad) return this.bad(e.span);
    if (!obj.ctx) return this.structMember(obj, e);
    return contextMember(this, obj.ctx, e);
  }

  /** `s.member` / `p->member` on a struct or union of the program (DWARF) */
  private structMember(obj0: TE, e: Extract<Expr, { k: 'member' }>): TE {
    let obj = obj0;
    if (e.arrow) {
      const pv = this.value(e.obj);
      if (pv.bad) return this.bad(e.span);
      if (!isPtr(pv.t) || pv.t.to.kind !== 'struct') {
        this.error(e.span, `'->${e.field}' needs a pointer to a struct or union, not '${typeName(pv.t)}'${pv.t.kind === 'ptr' ? '' : '; cast it first, e.g. ((struct file *)ptr)->name'}`);
        return this.bad(e.span);
      }
      obj = this.deref(pv, e.obj.span);
    } else if (obj.t.kind !== 'struct') {
      this.error(e.span, `'.${e.field}' needs a struct or union, not '${typeName(obj.t)}'${isPtr(obj.t) && obj.t.to.kind === 'struct' ? `; it is a pointer: use '->${e.field}'` : ''}`);
      return this.bad(e.span);
    }
    const st = obj.t as StructType;
    const m = findMember(st, e.field);
    if (!m) {
      const names = st.members().map(x => x.name).filter(Boolean);
      this.error(e.fieldSpan, `${typeName(st)} has no member '${e.field}'${names.length ? ` (members: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', ...' : ''})` : ''}`);
      return this.bad(e.span);
    }
    const base = obj.ev, span = e.span;
    // a member of a read-only program name is read-only (through a pointer it is memory like any other)
    const readonly = obj.lvReadonly && !obj.lvReadonly.startsWith('cannot assign a whole') ? obj.lvReadonly : undefined;
    if (m.bits) {
      const { offset, size } = m.bits;
      const bytes = Math.ceil((offset % 8 + size) / 8);
      const first = BigInt(Math.floor(offset / 8));
      const cv = converter(m.type);
      const signed = m.type.kind === 'int' && m.type.signed;
      const mask = (1n << BigInt(size)) - 1n;
      return {
        t: m.type, span, readonlyWhy: `'${e.field}' is a bit-field: it cannot be assigned or have its address taken here`,
        ev: f => {
          let raw = 0n;
          for (let i = bytes - 1; i >= 0; i--) raw = (raw << 8n) | readMem(f, base(f) + first + BigInt(i), 1, span);
          const v = (raw >> BigInt(offset % 8)) & mask;
          return cv(signed ? BigInt.asIntN(size, v) : v);
        },
      };
    }
    const off = BigInt(m.offset);
    const addr: Ev = f => BigInt.asUintN(64, base(f) + off);
    if (isAggregate(m.type)) return { t: m.type, ev: addr, span, lv: { kind: 'mem', addr, size: sizeOf(m.type) }, lvReadonly: readonly ?? `cannot assign a whole ${typeName(m.type)}` };
    if (m.type.kind === 'void') { this.error(span, `'${e.field}' has no type`); return this.bad(span); }
    const size = sizeOf(m.type) as 1 | 2 | 4 | 8;
    const cv = converter(m.type);
    return { t: m.type, ev: f => cv(readMem(f, addr(f), size, span)), span, lv: { kind: 'mem', addr, size }, lvReadonly: readonly };
  }

  /** *ptr as an lvalue. */
  deref(p: TE, span: Span): TE {
    if (p.bad) return this.bad(span);
    if (!isPtr(p.t)) { this.error(span, `cannot dereference a non-pointer of type '${typeName(p.t)}'`); return this.bad(span); }
    const to = p.t.to;
    if (to.kind === 'void') { this.error(span, "cannot dereference 'void *'; cast it first, e.g. *(u64 *)ptr"); return this.bad(span); }
    if (isAggregate(to)) return { t: to, ev: p.ev, span, lv: { kind: 'mem', addr: p.ev, size: sizeOf(to) }, lvReadonly: `cannot assign a whole ${typeName(to)}` };
    const size = sizeOf(to) as 1 | 2 | 4 | 8;
    const cv = converter(to);
    const addr = p.ev;
    return { t: to, ev: f => cv(readMem(f, addr(f), size, span)), span, lv: { kind: 'mem', addr, size } };
  }

  ptrAdd(p: TE, n: TE, op: '+' | '-', span: Span): TE {
    const scale = BigInt(sizeOf((p.t as { to: CType }).to));
    const a = p.ev, b = n.ev;
    const ev: Ev = op === '+' ? f => BigInt.asUintN(64, a(f) + b(f) * scale) : f => BigInt.asUintN(64, a(f) - b(f) * scale);
    return { t: p.t, ev, span };
  }

  binary(op: string, a: TE, b: TE, span: Span): TE {
    if (a.bad || b.bad) return this.bad(span);
    const x = a.ev, y = b.ev;
    if (op === '+' || op === '-') {
      if (isPtr(a.t) && isInt(b.t)) return this.ptrAdd(a, b, op, span);
      if (op === '+' && isInt(a.t) && isPtr(b.t)) return this.ptrAdd(b, a, '+', span);
      if (op === '-' && isPtr(a.t) && isPtr(b.t)) {
        if (sizeOf(a.t.to) !== sizeOf(b.t.to)) { this.error(span, `subtracting pointers to different types '${typeName(a.t)}' and '${typeName(b.t)}'`); return this.bad(span); }
        const sz = BigInt(sizeOf(a.t.to));
        return { t: T.long, ev: f => BigInt.asIntN(64, x(f) - y(f)) / sz, span };
      }
    }
    if (op === '==' || op === '!=' || op === '<' || op === '>' || op === '<=' || op === '>=') {
      let cx: (v: bigint) => bigint, cy: (v: bigint) => bigint;
      if (isInt(a.t) && isInt(b.t)) { const t = usualArith(a.t, b.t); cx = cy = converter(t); }
      else {
        if (isPtr(a.t) && isPtr(b.t) && !sameType(a.t, b.t) && a.t.to.kind !== 'void' && b.t.to.kind !== 'void') this.warn(span, `comparison of distinct pointer types '${typeName(a.t)}' and '${typeName(b.t)}'`);
        else if ((isInt(a.t) && a.constant !== 0n) || (isInt(b.t) && b.constant !== 0n)) this.warn(span, 'comparison between pointer and integer');
        cx = cy = converter(T.ulong);
      }
      let cmp: (p: bigint, q: bigint) => boolean;
      switch (op) {
        case '==': cmp = (p, q) => p === q; break;
        case '!=': cmp = (p, q) => p !== q; break;
        case '<': cmp = (p, q) => p < q; break;
        case '>': cmp = (p, q) => p > q; break;
        case '<=': cmp = (p, q) => p <= q; break;
        default: cmp = (p, q) => p >= q;
      }
      return { t: T.int, ev: f => (cmp(cx(x(f)), cy(y(f))) ? 1n : 0n), span };
    }
    if (!isInt(a.t) || !isInt(b.t)) { this.error(span, `invalid operands to binary '${op}' ('${typeName(a.t)}' and '${typeName(b.t)}')`); return this.bad(span); }
    if (op === '<<' || op === '>>') {
      const t = promote(a.t);
      const cv = converter(t);
      const mask = BigInt(t.size * 8 - 1);
      if (b.constant !== undefined && (b.constant < 0n || b.constant > mask)) this.warn(b.span, `shift count ${b.constant} is out of range for '${t.name}' (taken modulo ${t.size * 8})`);
      const ev: Ev = op === '<<' ? f => cv(cv(x(f)) << (y(f) & mask)) : f => cv(cv(x(f)) >> (y(f) & mask));
      return { t, ev, span };
    }
    const t = usualArith(a.t, b.t);
    const cv = converter(t);
    let ev: Ev;
    switch (op) {
      case '+': ev = f => cv(x(f) + y(f)); break;
      case '-': ev = f => cv(x(f) - y(f)); break;
      case '*': ev = f => cv(x(f) * y(f)); break;
      case '&': ev = f => cv(x(f) & y(f)); break;
      case '|': ev = f => cv(x(f) | y(f)); break;
      case '^': ev = f => cv(x(f) ^ y(f)); break;
      case '/': case '%': {
        if (b.constant === 0n) this.warn(b.span, 'division by zero');
        const min = t.signed ? -(1n << BigInt(t.size * 8 - 1)) : undefined;
        const div = op === '/';
        ev = (f: Frame): bigint => {
          const p = cv(x(f)), q = cv(y(f));
          if (q === 0n) throw fault('divide', `${div ? 'division' : 'modulo'} by zero`, span);
          if (min !== undefined && p === min && q === -1n) throw fault('divide', `${div ? 'division' : 'modulo'} overflow (${min} ${op} -1)`, span);
          return cv(div ? p / q : p % q);
        };
        break;
      }
      default: this.error(span, `unknown operator '${op}'`); return this.bad(span);
    }
    return { t, ev, span };
  }

  private unary(e: Extract<Expr, { k: 'unary' }>): TE {
    const span = e.span;
    if (e.op === '*') return this.deref(this.value(e.arg), span);
    if (e.op === '&') {
      const r = this.expr(e.arg);
      if (r.bad) return this.bad(span);
      if (r.lv?.kind === 'mem') return { t: ptrTo(r.t), ev: r.lv.addr, span };
      if (r.lv?.kind === 'prog') return { t: ptrTo(r.t), ev: placeAddress(r.lv, span), span };
      if (r.ctx) { this.error(span, `the address of '${r.ctx}' is not available`); return this.bad(span); }
      this.error(span, r.lv?.kind === 'slot' ? 'cannot take the address of a local variable (handler locals are not in emulated memory)' : r.lv?.kind === 'reg' ? 'cannot take the address of a register' : 'cannot take the address of this expression');
      return this.bad(span);
    }
    if (e.op === '!') {
      const r = this.value(e.arg);
      const x = r.ev;
      return { t: T.int, ev: f => (x(f) === 0n ? 1n : 0n), span, bad: r.bad, constant: r.constant !== undefined ? (r.constant === 0n ? 1n : 0n) : undefined };
    }
    const r = this.intValue(e.arg, `unary '${e.op}'`);
    if (r.bad) return this.bad(span);
    const t = promote(r.t);
    const cv = converter(t);
    const x = r.ev;
    const fn = e.op === '-' ? (v: bigint) => cv(-v) : e.op === '~' ? (v: bigint) => cv(~v) : (v: bigint) => cv(v);
    return { t, ev: f => fn(x(f)), span, constant: r.constant !== undefined ? fn(r.constant) : undefined };
  }

  /** Builtin calls live in calls.ts; this hook is replaced there. */
  call(e: Extract<Expr, { k: 'call' }>): TE {
    this.error(e.calleeSpan, `unknown function '${e.callee}'`);
    return this.bad(e.span);
  }

  isStringish(r: TE): boolean { return isCharPtr(r.t) || r.str !== undefined; }
}
