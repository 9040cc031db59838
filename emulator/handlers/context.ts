/**
 * The context a snippet sees, per handler kind: which names exist (p, regs,
 * ri, current, trapnr, flags, jiffies, arg0..arg5) and their fields. Used by
 * the compiler and, through contextFields()/HANDLER_KINDS, by completion and
 * hover.
 */
import { abiFactsFor, abiFactsForRegs } from '../arch/abiFacts';
import { CType, T, charType, isPtr, ptrTo, typeName } from './ctypes';
import { CompileOptions, HandlerKind } from './types';

export type ContextName = 'p' | 'regs' | 'ri' | 'current' | 'trapnr' | 'flags' | 'jiffies' | 'args' | 'watch';

/** the names a kwatch handler gets for its hit (ContextName 'watch') */
export const WATCH_NAMES: readonly { name: 'debugreg' | 'addr' | 'access' | 'old' | 'new'; type: string; doc: string }[] = [
  { name: 'debugreg', type: 'int', doc: 'the debug register number register_kwatch returned (x86: 0-3 for DR0-DR3)' },
  { name: 'addr', type: 'unsigned long', doc: 'the address the access used (an execute watch: the instruction)' },
  { name: 'access', type: 'int', doc: 'what the access was: HW_BREAKPOINT_R (1), HW_BREAKPOINT_W (2) or HW_BREAKPOINT_X (4); x86 reports an access to a rw watch as the first access of the instruction' },
  { name: 'old', type: 'unsigned long', doc: 'the watched bytes before the access, as an unsigned integer of the watched length (0 for an execute watch)' },
  { name: 'new', type: 'unsigned long', doc: 'the watched bytes after the access (data hits are reported after the access), as an unsigned integer of the watched length' },
];

/**
 * `array`: the field is a char array in Linux (`char comm[TASK_COMM_LEN]`);
 * in expressions it decays to `char *` (its type here), the debugger names
 * it with its array type and shows the string.
 */
export interface FieldDef { name: string; type: CType; doc: string; writable: boolean; array?: number }

/** Linux's TASK_COMM_LEN: the size of task_struct.comm */
export const TASK_COMM_LEN = 16;

const voidp = ptrTo(T.void);
const charp = ptrTo(T.char);

export const PROBE_FIELDS: readonly FieldDef[] = [
  { name: 'addr', type: voidp, doc: 'address the probe is planted at', writable: false },
  { name: 'symbol_name', type: charp, doc: "symbol the probe was registered on ('' when registered by address)", writable: false },
  { name: 'offset', type: T.uint, doc: 'offset of the probe from symbol_name', writable: false },
  { name: 'nmissed', type: T.ulong, doc: 'times this probe was hit but its handlers were skipped', writable: false },
  { name: 'flags', type: T.uint, doc: 'KPROBE_FLAG_* bits (gone, disabled, optimized, ftrace)', writable: false },
];

export const RI_FIELDS: readonly FieldDef[] = [
  { name: 'ret_addr', type: voidp, doc: "the probed function's real return address", writable: false },
  { name: 'task', type: voidp, doc: 'task the instance belongs to', writable: false },
  { name: 'rp', type: voidp, doc: 'the kretprobe (struct kretprobe *): ri->rp->maxactive, ri->rp->nmissed; unregister_kretprobe(ri->rp) and friends', writable: false },
  { name: 'data', type: charp, doc: 'this instance\'s data_size bytes of private data in emulated kernel memory (char data[] in Linux): index it as bytes, ri->data[0], or cast it, *(u64 *)ri->data', writable: false },
];

/** `ri->rp`: the struct kretprobe the instance belongs to */
export const RP_FIELDS: readonly FieldDef[] = [
  { name: 'maxactive', type: T.int, doc: 'instances that can be pending at once (the default filled in when registered with <= 0)', writable: false },
  { name: 'nmissed', type: T.int, doc: 'returns missed because all maxactive instances were in use', writable: false },
];

export const CURRENT_FIELDS: readonly FieldDef[] = [
  { name: 'pid', type: T.int, doc: 'process id of the task running on this CPU', writable: false },
  { name: 'comm', type: charp, doc: "command name of the task (Linux's char comm[TASK_COMM_LEN]; decays to char *, the debugger shows the string)", writable: false, array: TASK_COMM_LEN },
  { name: 'mm', type: voidp, doc: 'address space; NULL (0) for kernel threads', writable: false },
];

export const REG_TYPE = T.ulong;

/** Context names available to each handler kind. */
export const CONTEXT_BY_KIND: Readonly<Record<HandlerKind, readonly ContextName[]>> = {
  pre: ['p', 'regs', 'current', 'jiffies', 'args'],
  post: ['p', 'regs', 'flags', 'current', 'jiffies'],
  fault: ['p', 'regs', 'trapnr', 'current', 'jiffies'],
  entry: ['ri', 'p', 'regs', 'current', 'jiffies', 'args'],
  return: ['ri', 'p', 'regs', 'current', 'jiffies'],
  jprobe: ['p', 'regs', 'current', 'jiffies', 'args'],
  condition: ['p', 'ri', 'regs', 'current', 'jiffies', 'args'],
  log: ['p', 'ri', 'regs', 'current', 'jiffies', 'args'],
  kwatch: ['regs', 'watch', 'current', 'jiffies'],
};

export interface HandlerKindInfo {
  name: HandlerKind;
  doc: string;
  /** what the return value means */
  returns: string;
  /** names usable in the snippet (arg0..arg5 listed individually) */
  context: readonly string[];
}

function contextNames(kind: HandlerKind): string[] {
  const out: string[] = [];
  for (const c of CONTEXT_BY_KIND[kind]) {
    if (c === 'args') for (let i = 0; i < 6; i++) out.push(`arg${i}`);
    else if (c === 'watch') out.push(...WATCH_NAMES.map(w => w.name));
    else out.push(c);
  }
  return out;
}

export const HANDLER_KINDS: readonly HandlerKindInfo[] = [
  { name: 'pre', doc: 'kprobe pre_handler: runs when the probed instruction is hit, before it executes.', returns: 'int: 0 = continue normally (single-step the instruction); non-zero = the handler changed regs->ip, resume there without single-stepping', context: contextNames('pre') },
  { name: 'post', doc: 'kprobe post_handler: runs after the probed instruction was single-stepped.', returns: 'void (a returned value is ignored)', context: contextNames('post') },
  { name: 'fault', doc: 'kprobe fault_handler: runs when the pre/post handler or the single-step faults; trapnr is the trap number.', returns: 'int: 1 = the fault was handled, 0 = let the kernel handle it', context: contextNames('fault') },
  { name: 'entry', doc: 'kretprobe entry_handler: runs at function entry; ri->data is the instance\'s private data.', returns: 'int: 0 = arm the return handler for this call, non-zero = skip this instance', context: contextNames('entry') },
  { name: 'return', doc: 'kretprobe handler: runs when the probed function returns; regs_return_value(regs) is its result.', returns: 'int (ignored)', context: contextNames('return') },
  { name: 'jprobe', doc: "jprobe body: runs at function entry with the function's arguments in regs (and as arg0..arg5); ends like jprobe_return().", returns: 'ignored', context: contextNames('jprobe') },
  { name: 'condition', doc: 'breakpoint condition: one expression, or a body that returns a value.', returns: 'true (non-zero) = stop, 0 = keep running', context: contextNames('condition') },
  { name: 'log', doc: 'breakpoint log message / logpoint body: prints with printk, does not stop.', returns: 'ignored', context: contextNames('log') },
  { name: 'kwatch', doc: 'kwatch handler (kwatch_handler_t): runs when the watched memory is accessed (data: after the access, regs at the next instruction; execute: before the instruction).', returns: 'ignored', context: contextNames('kwatch') },
];

export interface ContextFieldInfo { name: string; type: string; doc: string; writable: boolean }
export interface ContextVarInfo { name: string; type: string; doc: string; fields: ContextFieldInfo[] }

function info(f: FieldDef): ContextFieldInfo { return { name: f.name, type: typeName(f.type), doc: f.doc, writable: f.writable }; }

/** Context variables of a handler kind with their fields, for completion and hover. */
export function contextFields(kind: HandlerKind, regNames: readonly string[]): ContextVarInfo[] {
  const out: ContextVarInfo[] = [];
  for (const c of CONTEXT_BY_KIND[kind]) {
    switch (c) {
      case 'p': out.push({ name: 'p', type: 'struct kprobe *', doc: 'the probe being handled', fields: PROBE_FIELDS.map(info) }); break;
      case 'ri': out.push({ name: 'ri', type: 'struct kretprobe_instance *', doc: 'the return-probe instance', fields: RI_FIELDS.map(info) }); break;
      case 'current': out.push({ name: 'current', type: 'struct task_struct *', doc: 'task running on this CPU', fields: CURRENT_FIELDS.map(info) }); break;
      case 'regs': out.push({ name: 'regs', type: 'struct pt_regs *', doc: 'saved registers of the probed context; assigning a field changes the context', fields: regNames.map(n => ({ name: n, type: typeName(REG_TYPE), doc: `register ${n}`, writable: true })) }); break;
      case 'trapnr': out.push({ name: 'trapnr', type: 'int', doc: 'trap number of the fault (x86: 14 page fault, 13 general protection, 6 invalid opcode)', fields: [] }); break;
      case 'flags': out.push({ name: 'flags', type: 'unsigned long', doc: 'post_handler flags argument (always 0)', fields: [] }); break;
      case 'jiffies': out.push({ name: 'jiffies', type: 'unsigned long', doc: 'timer ticks since boot', fields: [] }); break;
      case 'watch':
        for (const w of WATCH_NAMES) out.push({ name: w.name, type: w.type, doc: w.doc, fields: [] });
        break;
      case 'args':
        for (let i = 0; i < 6; i++) out.push({ name: `arg${i}`, type: 'unsigned long', doc: `argument ${i} of the probed function (its ABI argument register; valid at function entry)`, fields: [] });
        break;
    }
  }
  return out;
}

/**
 * Integer argument registers (pt_regs names) of an architecture, from its
 * ABI facts (emulator/arch/abiFacts.ts); without an arch name, of the arch
 * whose registers regNames are. Empty when unknown or when regNames lacks
 * one of them.
 */
export function defaultArgRegs(regNames: readonly string[], arch?: string): string[] {
  const f = arch !== undefined ? abiFactsFor(arch) : abiFactsForRegs(regNames);
  if (!f || !f.argRegs.every(n => regNames.includes(n))) return [];
  return [...f.argRegs];
}

/** pt_regs name of the program counter for these options (undefined when the arch is unknown). */
export function pcRegOf(regNames: readonly string[], arch?: string): string | undefined {
  const f = arch !== undefined ? abiFactsFor(arch) : abiFactsForRegs(regNames);
  return f && regNames.includes(f.pcReg) ? f.pcReg : undefined;
}

/** Whether plain `char` is signed: the option, else the arch's ABI, else true (gcc/clang on x86_64). */
export function charSignedOf(opts: Pick<CompileOptions, 'charSigned' | 'arch'>): boolean {
  if (opts.charSigned !== undefined) return opts.charSigned;
  return (opts.arch !== undefined ? abiFactsFor(opts.arch)?.charSigned : undefined) ?? true;
}

/** Argument registers for these options: the option, else the arch's ABI facts. */
export function argRegsOf(opts: Pick<CompileOptions, 'regNames' | 'argRegs' | 'arch'>): string[] {
  return opts.argRegs ?? defaultArgRegs(opts.regNames, opts.arch);
}

/** A context field's C type with plain `char` given the arch's signedness (`char *` fields). */
export function fieldType(f: FieldDef, charSigned: boolean): CType {
  return isPtr(f.type) && f.type.to === T.char ? ptrTo(charType(charSigned)) : f.type;
}
