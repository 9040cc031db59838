/**
 * What a name means in a handler: a local or static variable, a context
 * name of the handler's kind (regs, p, ri, current, trapnr, flags, jiffies,
 * arg0..arg5, a kwatch hit's debugreg/addr/access/old/new), a constant
 * (NULL, true, HW_BREAKPOINT_*), or a name of the probed program (DWARF),
 * and the fields of the context structures (regs->ip, p->addr, ri->rp,
 * current->comm...). The operators over them are in exprCompiler.ts.
 */
import { Expr, Span } from './ast';
import { CURRENT_FIELDS, FieldDef, PROBE_FIELDS, REG_TYPE, RI_FIELDS, RP_FIELDS, fieldType } from './context';
import { T, isAggregate, ptrTo, typeName } from './ctypes';
import type { ExprCompiler, TE } from './exprCompiler';
import { LV, access } from './lvalues';
import { Ev, Frame, ZERO, fault, internDynamic } from './runtime';
import { HandlerWatchInfo, ProgramName, ProgramPlace } from './types';

/** the watchpoint hit of a kwatch handler's run ('context' fault when the environment has none) */
function watchOf(f: Frame, name: string, span: Span): HandlerWatchInfo {
  const w = f.env.watch;
  if (!w) throw fault('context', `'${name}' is not available: no watchpoint hit in this context`, span);
  return w;
}

export function compileName(c: ExprCompiler, name: string, span: Span): TE {
  const l = c.lookup(name);
  if (l) {
    const slot = l.slot;
    if (l.isStatic) return { t: l.type, ev: f => f.statics[slot], span, lv: { kind: 'static', slot } };
    return { t: l.type, ev: f => f.slots[slot], span, lv: { kind: 'slot', slot } };
  }
  if (c.o.programScopeFirst) {
    const pn = c.o.programName?.(name);
    if (pn?.scoped) return programNameTE(c, name, pn, span);
  }
  switch (name) {
    case 'regs': case 'p': case 'ri': case 'current':
      if (!c.has(name)) { c.error(span, `'${name}' is not available in a ${c.o.kind} handler`); return c.bad(span); }
      return { t: T.void, ev: ZERO, span, ctx: name };
    case 'trapnr':
      if (!c.has('trapnr')) { c.error(span, `'trapnr' is only available in fault handlers`); return c.bad(span); }
      c.used.add('trapnr');
      return { t: T.int, ev: f => BigInt.asIntN(32, BigInt(f.env.trapnr ?? 0)), span, readonlyWhy: "'trapnr' is read-only" };
    case 'flags':
      if (!c.has('flags')) break;
      return { t: T.ulong, ev: f => BigInt.asUintN(64, f.env.postFlags ?? 0n), span, readonlyWhy: "'flags' is read-only" };
    case 'jiffies':
      return { t: T.ulong, ev: f => BigInt.asUintN(64, f.env.jiffies()), span, readonlyWhy: "'jiffies' is read-only" };
    case 'debugreg': case 'addr': case 'access': case 'old': case 'new': {
      if (!c.has('watch')) break;
      c.used.add(name);
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
  if (m && c.has('args')) {
    const reg = c.o.argRegs[Number(m[1])];
    if (reg === undefined) { c.error(span, `'${name}' is not available: the argument registers of this architecture are unknown`); return c.bad(span); }
    c.used.add(`regs->${reg}`);
    return { t: REG_TYPE, ev: f => BigInt.asUintN(64, f.env.getReg(reg)), span, lv: { kind: 'reg', name: reg } };
  }
  const pn = c.o.programName?.(name);
  if (pn) return programNameTE(c, name, pn, span);
  let hint = '';
  if (c.o.regNames.includes(name) && c.has('regs')) hint = ` (did you mean regs->${name}?)`;
  else if (name === 'flags') hint = ' (flags is only available in post handlers; the flags register is regs->flags)';
  else if (m) hint = ` (arguments are available in ${['pre', 'entry', 'jprobe', 'condition', 'log'].join('/')} handlers)`;
  c.error(span, `'${name}' is not declared${hint}`);
  return c.bad(span);
}

/** a name of the probed program (DWARF): its value at its place, assignable when the options allow */
function programNameTE(c: ExprCompiler, name: string, pn: ProgramName, span: Span): TE {
  if ('unavailable' in pn) { c.error(span, `'${name}' ${pn.unavailable}`); return c.bad(span); }
  c.used.add(`dwarf:${name}`);
  const what = pn.what;
  const place = (f: Frame): ProgramPlace => {
    try {
      return pn.place(f.env);
    } catch (e) {
      throw fault('memory', `'${name}' (${what}): ${e instanceof Error ? e.message : String(e)}`, span);
    }
  };
  const lv: LV = { kind: 'prog', place, name };
  const lvReadonly = c.o.programWritable ? undefined : `'${name}' (${what}) is read-only in a handler`;
  if (isAggregate(pn.type)) {
    const t = pn.type;
    const addrOf = placeAddress(lv, span);
    return { t, ev: addrOf, span, lv, lvReadonly: lvReadonly ?? `cannot assign a whole ${typeName(t)}` };
  }
  const { get } = access(lv, pn.type, span);
  return { t: pn.type, ev: f => get(f, 0n), span, lv, lvReadonly };
}

/** the address of a program name's place (a fault when it is not in memory) */
export function placeAddress(lv: Extract<LV, { kind: 'prog' }>, span: Span): Ev {
  const place = lv.place, name = lv.name;
  return f => {
    const p = place(f);
    if (p.kind === 'memory') return p.addr;
    throw fault('memory', `'${name}' has no address here: it is ${p.kind === 'register' ? `in register ${p.reg}` : 'a value the compiler computed'}`, span);
  };
}

/** `regs->x`, `p->field`, `ri->field`, `ri->rp->field`, `current->field` */
export function contextMember(c: ExprCompiler, ctx: NonNullable<TE['ctx']>, e: Extract<Expr, { k: 'member' }>): TE {
  if (!e.arrow) { c.error(e.span, `'${ctx}' is a pointer; use '${ctx}->${e.field}'`); return c.bad(e.span); }
  if (ctx === 'ri' && e.field === 'rp') {
    c.used.add('ri->rp');
    return { t: T.void, ev: ZERO, span: e.span, ctx: 'rp' };
  }
  if (ctx === 'rp') {
    const fd = RP_FIELDS.find(x => x.name === e.field);
    if (!fd) {
      c.error(e.fieldSpan, `struct kretprobe has no field '${e.field}' here (fields: ${RP_FIELDS.map(x => x.name).join(', ')})`);
      return c.bad(e.span);
    }
    c.used.add(`ri->rp->${fd.name}`);
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
    if (!c.o.regNames.includes(name)) {
      c.error(e.fieldSpan, `unknown register '${name}' in struct pt_regs (fields: ${c.o.regNames.join(' ')})`);
      return c.bad(e.span);
    }
    c.used.add(`regs->${name}`);
    return { t: REG_TYPE, ev: f => BigInt.asUintN(64, f.env.getReg(name)), span: e.span, lv: { kind: 'reg', name } };
  }
  const fields: readonly FieldDef[] = ctx === 'p' ? PROBE_FIELDS : ctx === 'ri' ? RI_FIELDS : CURRENT_FIELDS;
  const fd = fields.find(x => x.name === e.field);
  const structName = ctx === 'p' ? 'kprobe' : ctx === 'ri' ? 'kretprobe_instance' : 'task_struct';
  if (!fd) {
    c.error(e.fieldSpan, `struct ${structName} has no field '${e.field}' here (fields: ${fields.map(x => x.name).join(', ')})`);
    return c.bad(e.span);
  }
  c.used.add(`${ctx}->${fd.name}`);
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
  return { t: fieldType(fd, c.o.charSigned), ev, span, readonlyWhy: ro };
}
