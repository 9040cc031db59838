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
 */
import { Expr, MAX_NESTING, Span, nestingMessage } from './ast';
import { CURRENT_FIELDS, ContextName, FieldDef, PROBE_FIELDS, REG_TYPE, RI_FIELDS, RP_FIELDS, fieldType } from './context';
import { CType, IntType, StructType, T, converter, findMember, isAggregate, isCharPtr, isInt, isPtr, promote, ptrTo, sameType, sizeOf, typeName, usualArith } from './ctypes';
import { diagAt } from './parser';
import { Ev, Frame, StringPool, fault, internDynamic, readMem, writeMem } from './runtime';
import { Diagnostic, HandlerKind, HandlerWatchInfo, ProgramName, ProgramPlace } from './types';

export type LV =
  | { kind: 'slot'; slot: number }
  | { kind: 'static'; slot: number }
  | { kind: 'reg'; name: string }
  | { kind: 'mem'; addr: Ev; size: number }
  /** a program name (DWARF) wherever it is when the handler runs: memory, a register, or only a value */
  | { kind: 'prog'; place: (f: Frame) => ProgramPlace; name: string };

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
  charSigned: boolean;
}

const ZERO: Ev = () => 0n;

/** the watchpoint hit of a kwatch handler's run ('context' fault when the environment has none) */
function watchOf(f: Frame, name: string, span: Span): HandlerWatchInfo {
  const w = f.env.watch;
  if (!w) throw fault('context', `'${name}' is not available: no watchpoint hit in this context`, span);
  return w;
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
      case 'ident': return this.ident(e.name, e.span);
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
      case 'incdec': return this.incdec(e);
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
      case 'assign': return this.assign(e.op, e.target, e.value, e.span);
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

  private ident(name: string, span: Span): TE {
    const l = this.lookup(name);
    if (l) {
      const slot = l.slot;
      if (l.isStatic) return { t: l.type, ev: f => f.statics[slot], span, lv: { kind: 'static', slot } };
      return { t: l.type, ev: f => f.slots[slot], span, lv: { kind: 'slot', slot } };
    }
    switch (name) {
      case 'regs': case 'p': case 'ri': case 'current':
        if (!this.has(name)) { this.error(span, `'${name}' is not available in a ${this.o.kind} handler`); return this.bad(span); }
        return { t: T.void, ev: ZERO, span, ctx: name };
      case 'trapnr':
        if (!this.has('trapnr')) { this.error(span, `'trapnr' is only available in fault handlers`); return this.bad(span); }
        this.used.add('trapnr');
        return { t: T.int, ev: f => BigInt.asIntN(32, BigInt(f.env.trapnr ?? 0)), span, readonlyWhy: "'trapnr' is read-only" };
      case 'flags':
        if (!this.has('flags')) break;
        return { t: T.ulong, ev: f => BigInt.asUintN(64, f.env.postFlags ?? 0n), span, readonlyWhy: "'flags' is read-only" };
      case 'jiffies':
        return { t: T.ulong, ev: f => BigInt.asUintN(64, f.env.jiffies()), span, readonlyWhy: "'jiffies' is read-only" };
      case 'debugreg': case 'addr': case 'access': case 'old': case 'new': {
        if (!this.has('watch')) break;
        this.used.add(name);
        const ro = `'${name}' is read-only`;
        switch (name) {
          case 'debugreg': return { t: T.int, ev: f => BigInt(watchOf(f, name, span).debugreg), span, readonlyWhy: ro };
          case 'access': return { t: T.int, ev: f => BigInt(watchOf(f, name, span).access), span, readonlyWhy: ro };
          case 'addr': return { t: T.ulong, ev: f => BigInt.asUintN(64, watchOf(f, name, span).addr), span, readonlyWhy: ro };
          case 'old': return { t: T.ulong, ev: f => BigInt.asUintN(64, watchOf(f, name, span).old), span, readonlyWhy: ro };
          case 'new': return { t: T.ulong, ev: f => BigInt.asUintN(64, watchOf(f, name, span).new), span, readonlyWhy: ro };
        }
        break;
      }
      case 'HW_BREAKPOINT_R': return { t: T.int, ev: () => 1n, span, constant: 1n };
      case 'HW_BREAKPOINT_W': return { t: T.int, ev: () => 2n, span, constant: 2n };
      case 'HW_BREAKPOINT_RW': return { t: T.int, ev: () => 3n, span, constant: 3n };
      case 'HW_BREAKPOINT_X': return { t: T.int, ev: () => 4n, span, constant: 4n };
      case 'NULL': return { t: ptrTo(T.void), ev: ZERO, span, constant: 0n };
      case 'true': return { t: T.int, ev: () => 1n, span, constant: 1n };
      case 'false': return { t: T.int, ev: ZERO, span, constant: 0n };
    }
    const m = /^arg([0-5])$/.exec(name);
    if (m && this.has('args')) {
      const reg = this.o.argRegs[Number(m[1])];
      if (reg === undefined) { this.error(span, `'${name}' is not available: the argument registers of this architecture are unknown`); return this.bad(span); }
      this.used.add(`regs->${reg}`);
      return { t: REG_TYPE, ev: f => BigInt.asUintN(64, f.env.getReg(reg)), span, lv: { kind: 'reg', name: reg } };
    }
    const pn = this.o.programName?.(name);
    if (pn) {
      if ('unavailable' in pn) { this.error(span, `'${name}' ${pn.unavailable}`); return this.bad(span); }
      this.used.add(`dwarf:${name}`);
      const what = pn.what;
      const place = (f: Frame): ProgramPlace => {
        try {
          return pn.place(f.env);
        } catch (e) {
          throw fault('memory', `'${name}' (${what}): ${e instanceof Error ? e.message : String(e)}`, span);
        }
      };
      const lv: LV = { kind: 'prog', place, name };
      const lvReadonly = this.o.programWritable ? undefined : `'${name}' (${what}) is read-only in a handler`;
      if (isAggregate(pn.type)) {
        const t = pn.type;
        const addrOf = this.placeAddress(lv, span);
        return { t, ev: addrOf, span, lv, lvReadonly: lvReadonly ?? `cannot assign a whole ${typeName(t)}` };
      }
      const { get } = this.access(lv, pn.type, span);
      return { t: pn.type, ev: f => get(f, 0n), span, lv, lvReadonly };
    }
    let hint = '';
    if (this.o.regNames.includes(name) && this.has('regs')) hint = ` (did you mean regs->${name}?)`;
    else if (name === 'flags') hint = ' (flags is only available in post handlers; the flags register is regs->flags)';
    else if (m) hint = ` (arguments are available in ${['pre', 'entry', 'jprobe', 'condition', 'log'].join('/')} handlers)`;
    this.error(span, `'${name}' is not declared${hint}`);
    return this.bad(span);
  }

  /** the address of a program name's place (a fault when it is not in memory) */
  private placeAddress(lv: Extract<LV, { kind: 'prog' }>, span: Span): Ev {
    const place = lv.place, name = lv.name;
    return f => {
      const p = place(f);
      if (p.kind === 'memory') return p.addr;
      throw fault('memory', `'${name}' has no address here: it is ${p.kind === 'register' ? `in register ${p.reg}` : 'a value the compiler computed'}`, span);
    };
  }

  private member(e: Extract<Expr, { k: 'member' }>): TE {
    const obj = this.expr(e.obj);
    if (obj.bad) return this.bad(e.span);
    if (!obj.ctx) return this.structMember(obj, e);
    if (!e.arrow) { this.error(e.span, `'${obj.ctx}' is a pointer; use '${obj.ctx}->${e.field}'`); return this.bad(e.span); }
    const ctx = obj.ctx;
    if (ctx === 'ri' && e.field === 'rp') {
      this.used.add('ri->rp');
      return { t: T.void, ev: ZERO, span: e.span, ctx: 'rp' };
    }
    if (ctx === 'rp') {
      const fd = RP_FIELDS.find(x => x.name === e.field);
      if (!fd) {
        this.error(e.fieldSpan, `struct kretprobe has no field '${e.field}' here (fields: ${RP_FIELDS.map(x => x.name).join(', ')})`);
        return this.bad(e.span);
      }
      this.used.add(`ri->rp->${fd.name}`);
      const k = fd.name as 'maxactive' | 'nmissed';
      const span = e.span;
      return {
        t: fd.type, span, readonlyWhy: `'ri->rp->${k}' is read-only`,
        ev: f => {
          const ri = f.env.ri;
          if (!ri) throw fault('context', "'ri' is not available here (not a return probe)", span);
          return BigInt.asIntN(32, ri.rp?.[k] ?? 0n);
        },
      };
    }
    if (ctx === 'regs') {
      const name = e.field;
      if (!this.o.regNames.includes(name)) {
        this.error(e.fieldSpan, `unknown register '${name}' in struct pt_regs (fields: ${this.o.regNames.join(' ')})`);
        return this.bad(e.span);
      }
      this.used.add(`regs->${name}`);
      return { t: REG_TYPE, ev: f => BigInt.asUintN(64, f.env.getReg(name)), span: e.span, lv: { kind: 'reg', name } };
    }
    const fields: readonly FieldDef[] = ctx === 'p' ? PROBE_FIELDS : ctx === 'ri' ? RI_FIELDS : CURRENT_FIELDS;
    const fd = fields.find(x => x.name === e.field);
    const structName = ctx === 'p' ? 'kprobe' : ctx === 'ri' ? 'kretprobe_instance' : 'task_struct';
    if (!fd) {
      this.error(e.fieldSpan, `struct ${structName} has no field '${e.field}' here (fields: ${fields.map(x => x.name).join(', ')})`);
      return this.bad(e.span);
    }
    this.used.add(`${ctx}->${fd.name}`);
    const span = e.span;
    const ro = `'${ctx}->${fd.name}' is read-only`;
    const field = fd.name;
    const missing = (what: string): never => { throw fault('context', `'${ctx}' is not available here (${what})`, span); };
    let ev: Ev;
    if (ctx === 'p') {
      if (field === 'symbol_name') ev = f => internDynamic(f, (f.env.probe ?? missing('no probe')).symbol_name);
      else if (field === 'offset') ev = f => BigInt.asUintN(32, (f.env.probe ?? missing('no probe')).offset);
      else if (field === 'flags') ev = f => BigInt.asUintN(32, (f.env.probe ?? missing('no probe')).flags);
      else {
        const k = field as 'addr' | 'nmissed';
        ev = f => BigInt.asUintN(64, (f.env.probe ?? missing('no probe'))[k]);
      }
    } else if (ctx === 'ri') {
      const k = field as 'ret_addr' | 'task' | 'data';
      ev = f => BigInt.asUintN(64, (f.env.ri ?? missing('not a return probe'))[k]);
    } else {
      if (field === 'pid') ev = f => BigInt.asIntN(32, BigInt(f.env.current.pid));
      else if (field === 'comm') ev = f => internDynamic(f, f.env.current.comm);
      else ev = f => BigInt.asUintN(64, f.env.current.mm);
    }
    return { t: fieldType(fd, this.o.charSigned), ev, span, readonlyWhy: ro };
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
      if (r.lv?.kind === 'prog') return { t: ptrTo(r.t), ev: this.placeAddress(r.lv, span), span };
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

  /** get/set access to an lvalue, evaluating the address once. */
  access(lv: LV, t: CType, span: Span): { prep: Ev; get: (f: Frame, a: bigint) => bigint; set: (f: Frame, a: bigint, v: bigint) => void } {
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
  private noteRegWrite(lv: LV, span: Span): void {
    if (lv.kind !== 'reg') return;
    this.used.add(`write:regs->${lv.name}`);
    if (!this.regWrites.has(lv.name)) this.regWrites.set(lv.name, span);
  }

  /** Check that r is assignable; report and return false if not. */
  assignable(r: TE, span: Span): r is TE & { lv: LV } {
    if (r.bad) return false;
    if (r.lv && r.lvReadonly) { this.error(span, r.lvReadonly); return false; }
    if (r.lv) return true;
    this.error(span, r.readonlyWhy ?? (r.ctx ? `cannot assign to '${r.ctx}'` : r.str !== undefined ? 'cannot assign to a string literal' : 'expression is not assignable'));
    return false;
  }

  private assign(op: string, target: Expr, value: Expr, span: Span): TE {
    const l = this.expr(target);
    const r = this.value(value);
    if (!this.assignable(l, target.span) || r.bad) return this.bad(span);
    this.noteRegWrite(l.lv, target.span);
    const acc = this.access(l.lv, l.t, span);
    if (op === '=') {
      const val = this.coerce(r, l.t, 'assignment');
      const { prep, set } = acc;
      return { t: l.t, ev: f => { const a = prep(f); const v = val(f); set(f, a, v); return v; }, span };
    }
    const bop = op.slice(0, -1);
    const cur: TE = { t: l.t, ev: ZERO, span: l.span };
    // Compute with a placeholder for the current value, read once through the accessor.
    let curVal = 0n;
    cur.ev = () => curVal;
    const res = this.binary(bop, cur, r, span);
    if (res.bad) return this.bad(span);
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

  private incdec(e: Extract<Expr, { k: 'incdec' }>): TE {
    const l = this.expr(e.arg);
    if (!this.assignable(l, e.arg.span)) return this.bad(e.span);
    this.noteRegWrite(l.lv, e.arg.span);
    if (l.t.kind === 'void') { this.error(e.span, `invalid operand to '${e.op}'`); return this.bad(e.span); }
    const delta = (e.op === '++' ? 1n : -1n) * (isPtr(l.t) ? BigInt(sizeOf(l.t.to)) : 1n);
    const cv = converter(l.t);
    const { prep, get, set } = this.access(l.lv, l.t, e.span);
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

  /** Builtin calls live in calls.ts; this hook is replaced there. */
  call(e: Extract<Expr, { k: 'call' }>): TE {
    this.error(e.calleeSpan, `unknown function '${e.callee}'`);
    return this.bad(e.span);
  }

  isStringish(r: TE): boolean { return isCharPtr(r.t) || r.str !== undefined; }
}
