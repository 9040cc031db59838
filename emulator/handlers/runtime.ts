/**
 * Run-time state of one handler invocation and the memory access path of
 * compiled snippets.
 *
 * STRING LITERALS. A string literal's value is an address, like in C, but the
 * bytes do not live in emulated memory: they live in a pool owned by the
 * compiled handler at NON-CANONICAL addresses (0x5354524c_xxxxxxxx, "STRL"),
 * which no emulated CPU can map on x86_64 / aarch64 / riscv64. Every read a
 * snippet makes (`*s`, `s[i]`, printk's %s, strlen, strcmp...) checks the pool
 * first, so literals behave like read-only char arrays; writing to one is a
 * 'memory' fault. Strings the environment hands over as JS strings
 * (`current->comm`, `p->symbol_name`) are interned per invocation the same way
 * at 0x53545244_xxxxxxxx ("STRD"). Such addresses never reach the env.
 */
import { HandlerEnv, HandlerFault, HandlerFaultKind } from './types';
import { Span } from './ast';
import { hex } from '../memory/address';

export const LITERAL_POOL_BASE = 0x5354524c00000000n;
export const DYNAMIC_POOL_BASE = 0x5354524400000000n;
/** Addresses below this are the null page: dereferencing them is a 'null' fault without asking the env. */
export const NULL_PAGE_END = 0x1000n;
/** Longest string read for %s / strlen / strcmp. */
export const MAX_STRING = 4096;

export class StringPool {
  // made at the first string: most handlers have no string literal, and a probe file keeps one pool per handler
  private entries: { addr: bigint; bytes: Uint8Array }[] | undefined;
  private next: bigint;
  private byText: Map<string, bigint> | undefined;
  constructor(readonly base: bigint) { this.next = base; }

  /** Address of a NUL-terminated copy of `s` (latin-1 bytes: one char = one byte). */
  intern(s: string): bigint {
    const byText = (this.byText ??= new Map());
    const known = byText.get(s);
    if (known !== undefined) return known;
    const bytes = new Uint8Array(s.length + 1);
    for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i) & 0xff;
    const addr = this.next;
    (this.entries ??= []).push({ addr, bytes });
    byText.set(s, addr);
    this.next += BigInt((bytes.length + 7) & ~7) + 8n;
    return addr;
  }

  /** No string was interned (a handler without string literals). */
  get empty(): boolean { return this.entries === undefined; }

  /** Whether addr falls in this pool's address range (even between strings). */
  owns(addr: bigint): boolean { return addr >= this.base && addr < this.base + 0x100000000n; }

  /** The string's bytes and the offset of addr inside them, or undefined (outside any string). */
  find(addr: bigint): { bytes: Uint8Array; off: number } | undefined {
    for (const e of this.entries ?? []) {
      if (addr >= e.addr && addr < e.addr + BigInt(e.bytes.length)) return { bytes: e.bytes, off: Number(addr - e.addr) };
    }
    return undefined;
  }
}

/** Per-invocation state passed to every compiled closure. */
export interface Frame {
  readonly env: HandlerEnv;
  readonly slots: bigint[];
  /** the compiled handler's static variables (kept across runs) */
  readonly statics: bigint[];
  steps: number;
  readonly budget: number;
  ret: bigint;
  readonly lits: StringPool;
  dyn?: StringPool;
}

export type Ev = (f: Frame) => bigint;

/** the constant 0 */
export const ZERO: Ev = () => 0n;

export function fault(kind: HandlerFaultKind, message: string, span: Span, addr?: bigint, access?: 'read' | 'write'): HandlerFault {
  return new HandlerFault(kind, message, span.line, span.column, addr, access);
}


function poolOf(f: Frame, addr: bigint): StringPool | undefined {
  if (f.lits.owns(addr)) return f.lits;
  if (f.dyn && f.dyn.owns(addr)) return f.dyn;
  return undefined;
}

export function internDynamic(f: Frame, s: string): bigint {
  f.dyn ??= new StringPool(DYNAMIC_POOL_BASE);
  return f.dyn.intern(s);
}

export function readMem(f: Frame, addr: bigint, size: 1 | 2 | 4 | 8, span: Span): bigint {
  const pool = poolOf(f, addr);
  if (pool) {
    const hit = pool.find(addr);
    if (!hit || hit.off + size > hit.bytes.length) throw fault('memory', `read of ${size} byte(s) at ${hex(addr)} is outside the string literal`, span, addr, 'read');
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(hit.bytes[hit.off + i]);
    return v;
  }
  if (addr < NULL_PAGE_END) throw fault('null', `NULL pointer dereference: read of ${size} byte(s) at ${hex(addr)}`, span, addr, 'read');
  try {
    return BigInt.asUintN(size * 8, f.env.readMem(addr, size));
  } catch (e) {
    if (e instanceof HandlerFault) throw e;
    throw fault('memory', `bad memory read of ${size} byte(s) at ${hex(addr)}: ${errText(e)}`, span, addr, 'read');
  }
}

export function writeMem(f: Frame, addr: bigint, size: 1 | 2 | 4 | 8, value: bigint, span: Span): void {
  if (poolOf(f, addr)) throw fault('memory', `write of ${size} byte(s) at ${hex(addr)}: string literals are read-only`, span, addr, 'write');
  if (addr < NULL_PAGE_END) throw fault('null', `NULL pointer dereference: write of ${size} byte(s) at ${hex(addr)}`, span, addr, 'write');
  try {
    f.env.writeMem(addr, size, BigInt.asUintN(size * 8, value));
  } catch (e) {
    if (e instanceof HandlerFault) throw e;
    throw fault('memory', `bad memory write of ${size} byte(s) at ${hex(addr)}: ${errText(e)}`, span, addr, 'write');
  }
}

/** NUL-terminated string at addr (pool-aware); throws a HandlerFault on a bad address. */
export function readCString(f: Frame, addr: bigint, max: number, span: Span): string {
  const pool = poolOf(f, addr);
  if (pool) {
    const hit = pool.find(addr);
    if (!hit) throw fault('memory', `string read at ${hex(addr)} is outside the string literal`, span, addr, 'read');
    let s = '';
    for (let i = hit.off; i < hit.bytes.length && hit.bytes[i] !== 0 && s.length < max; i++) s += String.fromCharCode(hit.bytes[i]);
    return s;
  }
  if (addr < NULL_PAGE_END) throw fault('null', `NULL pointer dereference: string read at ${hex(addr)}`, span, addr, 'read');
  try {
    return f.env.readCString(addr, max);
  } catch (e) {
    if (e instanceof HandlerFault) throw e;
    throw fault('memory', `bad string read at ${hex(addr)}: ${errText(e)}`, span, addr, 'read');
  }
}

export function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function step(f: Frame, span: Span): void {
  if (++f.steps > f.budget) throw budgetFault(f, span);
}

/** Charge n more steps (work a builtin did beyond its statement's step). */
export function chargeSteps(f: Frame, n: number, span: Span): void {
  f.steps += n;
  if (f.steps > f.budget) throw budgetFault(f, span);
}

function budgetFault(f: Frame, span: Span): HandlerFault {
  return fault('budget', `handler exceeded its step budget of ${f.budget} (runaway loop?)`, span);
}
