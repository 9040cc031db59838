/**
 * .debug_info reader (DWARF 2-5, 32- and 64-bit DWARF) — the base of the
 * debugger's variables, types and locations (debugging at the level of the C
 * source). Lazy: `units()` reads only the unit headers; a unit's DIE tree is
 * parsed the first time it is asked for, so the sample kernel pays only for
 * the units a frame shows. Attribute values are resolved on access: string
 * and address indexes (DW_FORM_strx*, addrx*) through the unit's
 * DW_AT_str_offsets_base / DW_AT_addr_base, unit-relative references to
 * .debug_info offsets, loclistx / rnglistx through DW_AT_loclists_base /
 * DW_AT_rnglists_base.
 *
 * Bad input never throws out of this module's public methods: a unit whose
 * header or DIEs cannot be read is returned with `error` set (its reason)
 * and no DIEs, so a frame in it shows "no debug info" with the reason.
 */
import { ByteReader, strAt } from '../reader';
import { sectionContents } from '../compressed';
import type { ElfImage } from '../types';
import { DW_FORM, type FormContext } from './forms';
import { DW_AT, readRaw, type AttrValue, type Die, type RawValue, type Unit } from './dies';
import { loclistAt, rangeList } from './location';
import { ArangeIndex, readAranges } from './aranges';
import { relocateExpr, type AddressRelocation } from './relocate';

export interface DebugInfoSections {
  info?: Uint8Array;
  abbrev?: Uint8Array;
  str?: Uint8Array;
  lineStr?: Uint8Array;
  strOffsets?: Uint8Array;
  addr?: Uint8Array;
  loclists?: Uint8Array;
  rnglists?: Uint8Array;
  /** DWARF 4 location and range lists */
  loc?: Uint8Array;
  ranges?: Uint8Array;
  /** address -> unit index (optional; without it address lookups read the units' own ranges) */
  aranges?: Uint8Array;
}

interface Abbrev { tag: number; children: boolean; attrs: { at: number; form: number; implicit: bigint }[] }

const MAX_DEPTH = 1000;

export class DebugInfo {
  private unitList: Unit[] | undefined;
  private readonly abbrevs = new Map<number, Map<number, Abbrev>>();
  private readonly trees = new Map<number, { root: Die | null; byOffset: Map<number, Die> }>();
  private readonly heads = new Map<number, Die | null>();
  private arangeIndex: ArangeIndex | null | undefined;
  /** a relocated view's mapping of link addresses (relocated()); undefined: the link addresses as they are */
  private reloc: AddressRelocation | undefined;
  private relocatedBlocks: WeakMap<Uint8Array, Uint8Array> | undefined;
  /** the reader whose DIE trees and caches a relocated view shares (this one when not a view) */
  private sharedWith: DebugInfo = this;

  constructor(private readonly s: DebugInfoSections, private readonly little = true) {}

  /**
   * The same debug information with every address relocated (a program
   * running away from its link addresses): low_pc / high_pc / entry_pc,
   * range and location lists (looked up by run-time pc), .debug_addr
   * entries and DW_OP_addr in locations come out as run-time addresses.
   * DIE trees, abbreviations and unit headers are shared with this reader.
   */
  relocated(reloc: AddressRelocation): DebugInfo {
    const base = this.sharedWith;
    base.units();
    if (base.arangeIndex === undefined) base.arangeIndex = readAranges(base.s.aranges, base.little) ?? null;
    const v = Object.create(base) as DebugInfo;
    v.reloc = reloc;
    v.relocatedBlocks = new WeakMap();
    return v;
  }

  /** the reader a relocated view shares its DIEs with (caches of names and types key on it) */
  get shared(): DebugInfo { return this.sharedWith; }

  /** the raw .debug_info (what a persistent index of it is keyed on) */
  get infoBytes(): Uint8Array | undefined { return this.s.info; }

  /** The unit headers (no DIE is read). */
  units(): Unit[] {
    if (this.unitList) return this.unitList;
    const out: Unit[] = [];
    const info = this.s.info;
    if (info) {
      const r = new ByteReader(info, this.little);
      while (r.pos < r.length) {
        const offset = r.pos;
        try {
          const { length, offsetSize } = r.initialLength();
          const start = r.pos;
          const end = start + Number(length);
          if (length === 0n || end > r.length) {
            out.push(bad(offset, r.length, `unit at 0x${offset.toString(16)}: length 0x${length.toString(16)} runs past .debug_info (0x${r.length.toString(16)} bytes)`));
            break;
          }
          const version = r.u16();
          let unitType = 1, addressSize: number, abbrevOffset: number;
          if (version >= 5) {
            unitType = r.u8();
            addressSize = r.u8();
            abbrevOffset = Number(r.uint(offsetSize));
            if (unitType === 4 || unitType === 5) r.skip(8); // dwo_id
            else if (unitType === 2 || unitType === 6) { r.skip(8); r.skip(offsetSize); } // type signature, type offset
          } else if (version >= 2) {
            abbrevOffset = Number(r.uint(offsetSize));
            addressSize = r.u8();
          } else {
            out.push(bad(offset, end, `unit at 0x${offset.toString(16)}: DWARF version ${version} is not supported`));
            r.pos = end;
            continue;
          }
          out.push({ offset, end, version, unitType, offsetSize, addressSize, abbrevOffset, dieOffset: r.pos });
          r.pos = end;
        } catch (e) {
          out.push(bad(offset, r.length, `unit at 0x${offset.toString(16)}: ${errText(e)}`));
          break;
        }
      }
    }
    this.unitList = out;
    return out;
  }

  /** The unit's root DIE (compile / partial / skeleton unit), parsing the unit's DIE tree on first use; null when unreadable. */
  root(u: Unit): Die | null {
    return this.tree(u).root;
  }

  /** The DIE at a .debug_info offset (in any unit), or undefined. */
  dieAt(offset: number): Die | undefined {
    const u = this.unitContaining(offset);
    return u && offset >= u.dieOffset && offset < u.end ? this.tree(u).byOffset.get(offset) : undefined;
  }

  /** DW_OP_convert's operand: the base type at an offset from the unit's header (size, signedness), or undefined. */
  baseType(u: Unit, unitOffset: bigint): { size: number; signed: boolean } | undefined {
    const d = this.dieAt(u.offset + Number(unitOffset));
    if (!d || d.tag !== 0x24) return undefined;
    const enc = Number(this.uint(d, DW_AT.encoding) ?? 0n);
    return { size: Number(this.uint(d, DW_AT.byte_size) ?? 0n), signed: enc === 0x05 || enc === 0x06 };
  }

  /** Every DIE of the unit in file order (empty when unreadable). */
  dies(u: Unit): Die[] {
    return [...this.tree(u).byOffset.values()];
  }

  /** An attribute resolved (indexes and bases applied); undefined when absent or unresolvable. */
  attr(d: Die, at: number): AttrValue | undefined {
    const v = d.attrs.get(at);
    if (!v) return undefined;
    try {
      return this.resolve(d.unit, v, at);
    } catch {
      return undefined;
    }
  }

  /** DW_AT_name as a string */
  name(d: Die): string | undefined {
    const v = this.attr(d, DW_AT.name);
    return v?.kind === 'string' ? v.value : undefined;
  }

  /** an unsigned attribute value */
  uint(d: Die, at: number): bigint | undefined {
    const v = this.attr(d, at);
    return v && (v.kind === 'uint' || v.kind === 'sint' || v.kind === 'secOffset' || v.kind === 'addr') ? v.value : undefined;
  }

  /** .debug_addr entry `index` of a unit (DW_OP_addrx, location lists) */
  addrIndex(u: Unit, index: bigint): bigint | undefined {
    try { return this.out(this.addrx(u, index)); } catch { return undefined; }
  }

  /** a link address as the view shows it (run time when relocated) */
  private out(a: bigint): bigint { return this.reloc ? this.reloc.toRuntime(a) : a; }

  /** a location expression with its DW_OP_addr operands relocated (the same bytes when not a view) */
  private expr(u: Unit, e: Uint8Array): Uint8Array {
    if (!this.reloc) return e;
    let r = this.relocatedBlocks!.get(e);
    if (!r) { r = relocateExpr(e, this.reloc, u.addressSize, u.offsetSize, this.little); this.relocatedBlocks!.set(e, r); }
    return r;
  }

  /** a list's context in link addresses (the lists are read as linked; relocated after) */
  private listContext(u: Unit): { little: boolean; addressSize: number; base: bigint; addrx: (i: bigint) => bigint | undefined } {
    return { little: this.little, addressSize: u.addressSize, base: this.unitBase(u), addrx: (i: bigint) => { try { return this.addrx(u, i); } catch { return undefined; } } };
  }

  /**
   * The entry pc of a DIE with code (an inlined subroutine's first
   * instruction of the inlined body): DW_AT_entry_pc (an address, or in
   * DWARF 5 a constant offset from low_pc), else low_pc, else the lowest
   * start of its ranges.
   */
  entryPc(d: Die): bigint | undefined {
    const e = this.attr(d, DW_AT.entry_pc);
    const lo = this.attr(d, DW_AT.low_pc);
    const low = lo && (lo.kind === 'addr' || lo.kind === 'uint') ? lo.value : undefined;
    if (e?.kind === 'addr') return e.value;
    if (e && (e.kind === 'uint' || e.kind === 'sint') && low !== undefined && d.unit.version >= 5) return low + e.value;
    if (low !== undefined) return low;
    const r = this.ranges(d);
    return r.length ? r.reduce((m, [x]) => (x < m ? x : m), r[0][0]) : undefined;
  }

  /** The [lo, hi) address ranges of a DIE (low_pc/high_pc or DW_AT_ranges); empty when it has none or they cannot be read. */
  ranges(d: Die): [bigint, bigint][] {
    const lo = this.attr(d, DW_AT.low_pc);
    const hi = this.attr(d, DW_AT.high_pc);
    if (lo && hi && (lo.kind === 'addr' || lo.kind === 'uint')) {
      if (hi.kind === 'addr') return [[lo.value, hi.value]];
      if (hi.kind === 'uint' || hi.kind === 'sint') return [[lo.value, lo.value + hi.value]];
    }
    const rv = d.attrs.get(DW_AT.ranges);
    if (!rv) return [];
    const u = d.unit;
    try {
      const ctx = this.listContext(u);
      let list: [bigint, bigint][];
      if (u.version >= 5) {
        const sec = this.s.rnglists;
        if (!sec) return [];
        const off = rv.kind === 'rnglistx' ? this.listOffset(sec, u, DW_AT.rnglists_base, rv.index) : (rv as { value: bigint }).value;
        list = rangeList(sec, Number(off), ctx, 5);
      } else {
        const sec = this.s.ranges;
        // DWARF 2/3 give the offset in a data form (data4/data8), 4 in DW_FORM_sec_offset
        list = sec && (rv.kind === 'secOffset' || rv.kind === 'uint') ? rangeList(sec, Number(rv.value), ctx, 4) : [];
      }
      return this.reloc ? list.map(([lo, hi]) => [this.out(lo), this.out(lo) + (hi - lo)]) : list;
    } catch {
      return [];
    }
  }

  /** The location expression of a DIE's attribute (DW_AT_location, DW_AT_frame_base) in effect at pc; undefined: optimized out there. */
  locationAt(d: Die, at: number, pc: bigint): Uint8Array | undefined {
    const v = d.attrs.get(at);
    if (!v) return undefined;
    const u = d.unit;
    if (v.kind === 'block') return this.expr(u, v.value);
    const ctx = this.listContext(u);
    const linkPc = this.reloc ? this.reloc.toLink(pc) : pc;
    let e: Uint8Array | undefined;
    if (u.version >= 5) {
      const sec = this.s.loclists;
      if (!sec) throw new RangeError('a location list without .debug_loclists');
      const off = v.kind === 'loclistx' ? this.listOffset(sec, u, DW_AT.loclists_base, v.index) : v.kind === 'secOffset' ? v.value : undefined;
      if (off === undefined) throw new RangeError('a location of an unexpected form');
      e = loclistAt(sec, Number(off), linkPc, ctx, 5);
    } else {
      const sec = this.s.loc;
      if (!sec || (v.kind !== 'secOffset' && v.kind !== 'uint')) throw new RangeError('a location list without .debug_loc');
      e = loclistAt(sec, Number(v.value), linkPc, ctx, 4);
    }
    return e && this.expr(u, e);
  }

  /**
   * The unit whose ranges hold pc: through .debug_aranges when the image has
   * it (no unit is read), else (and for units no address range set names) by
   * each unit's root DIE's ranges.
   */
  unitFor(pc: bigint): Unit | undefined {
    if (this.arangeIndex === undefined) this.arangeIndex = readAranges(this.s.aranges, this.little) ?? null;
    const idx = this.arangeIndex;
    if (idx) {
      const off = idx.unitAt(this.reloc ? this.reloc.toLink(pc) : pc);
      const u = off === undefined ? undefined : this.unitAtOffset(off);
      if (u && !u.error) return u;
    }
    for (const u of this.units()) {
      if (u.error || idx?.units.has(u.offset)) continue;
      const head = this.head(u);
      if (head && this.ranges(head).some(([lo, hi]) => pc >= lo && pc < hi)) return u;
    }
    return undefined;
  }

  /** the last unit whose header starts at or before a .debug_info offset */
  private unitContaining(offset: number): Unit | undefined {
    const list = this.units();
    let l = 0, h = list.length;
    while (l < h) {
      const m = (l + h) >> 1;
      if (list[m].offset <= offset) l = m + 1; else h = m;
    }
    return list[l - 1];
  }

  /** The unit whose header is at a .debug_info offset. */
  unitAtOffset(offset: number): Unit | undefined {
    const u = this.unitContaining(offset);
    return u && u.offset === offset ? u : undefined;
  }

  /** The unit's root DIE without its children (only the root's attributes are read), null when unreadable. */
  head(u: Unit): Die | null {
    const t = this.trees.get(u.offset);
    if (t) return t.root;
    let d = this.heads.get(u.offset);
    if (d !== undefined) return d;
    const one = { root: null as Die | null, byOffset: new Map<number, Die>() };
    try { this.parseDies(u, one, true); } catch { one.root = null; }
    d = one.root;
    this.heads.set(u.offset, d);
    return d;
  }

  /** the unit's base address as linked (DW_AT_low_pc of its root) */
  private unitBase(u: Unit): bigint {
    const root = this.head(u);
    const raw = root?.attrs.get(DW_AT.low_pc);
    if (!raw) return 0n;
    try {
      const lo = raw.kind === 'addrx' ? { kind: 'addr', value: this.addrx(u, raw.index) } : raw;
      return lo.kind === 'addr' || lo.kind === 'uint' ? (lo as { value: bigint }).value : 0n;
    } catch {
      return 0n;
    }
  }

  /** DWARF 5 loclistx / rnglistx: the list's offset from the offsets array at the unit's base */
  private listOffset(sec: Uint8Array, u: Unit, baseAt: number, index: bigint): bigint {
    const base = this.rootUint(u, baseAt) ?? 12n;
    const entry = new ByteReader(sec, this.little).uintAt(Number(base + index * BigInt(u.offsetSize)), u.offsetSize);
    return base + entry;
  }

  /**
   * Visit the unit's top-level DIEs (the root's children) without building
   * its tree: each is given shallow (attributes, no children; dieAt(offset)
   * gives the full one), its subtree skipped through DW_AT_sibling where the
   * producer recorded one. For indexes over every unit of a big image.
   */
  eachTopLevel(u: Unit, visit: (d: Die) => void, tags?: ReadonlySet<number>): void {
    const t = this.trees.get(u.offset);
    if (t) { for (const c of t.root?.children ?? []) if (!tags || tags.has(c.tag)) visit(c); return; }
    if (u.error) return;
    const r = new ByteReader((this.s.info as Uint8Array).subarray(0, u.end), this.little, u.dieOffset);
    const read = this.dieReader(u, r, tags);
    const root = read();
    if (!root || !root.ab.children) return;
    const parent: Die = { offset: root.offset, tag: root.ab.tag, attrs: root.attrs, parent: null, children: [], unit: u };
    while (r.pos < u.end) {
      const d = read();
      if (!d) return;
      if (!tags || tags.has(d.ab.tag)) visit({ offset: d.offset, tag: d.ab.tag, attrs: d.attrs, parent, children: [], unit: u });
      if (!d.ab.children) continue;
      const sib = d.attrs.get(DW_AT.sibling);
      if (sib?.kind === 'ref' && sib.offset > d.offset && sib.offset <= u.end) { r.pos = sib.offset; continue; }
      for (let depth = 1; depth > 0 && r.pos < u.end;) {
        const c = read();
        if (!c) depth--;
        else if (c.ab.children) depth++;
      }
    }
  }

  /** The DIE at a .debug_info offset read alone (attributes, no children, no tree built); undefined when unreadable. */
  shallowAt(offset: number): Die | undefined {
    const u = this.unitContaining(offset);
    if (!u || u.error || offset < u.dieOffset || offset >= u.end) return undefined;
    const t = this.trees.get(u.offset);
    if (t) return t.byOffset.get(offset);
    try {
      const d = this.dieReader(u, new ByteReader((this.s.info as Uint8Array).subarray(0, u.end), this.little, offset))();
      return d && { offset, tag: d.ab.tag, attrs: d.attrs, parent: null, children: [], unit: u };
    } catch {
      return undefined;
    }
  }

  /**
   * reads one DIE's abbreviation and attributes at the reader's position (undefined: a null entry); the
   * attributes of a DIE whose tag `keep` lacks go to one reused map (valid until the next read)
   */
  private dieReader(u: Unit, r: ByteReader, keep?: ReadonlySet<number>): () => { offset: number; ab: Abbrev; attrs: Map<number, RawValue> } | undefined {
    const table = this.abbrevTable(u.abbrevOffset);
    const scratch = new Map<number, RawValue>();
    const ctx: FormContext = { offsetSize: u.offsetSize, addressSize: u.addressSize, version: u.version, str: this.s.str, lineStr: this.s.lineStr };
    return () => {
      const offset = r.pos;
      const code = r.uleb();
      if (code === 0) return undefined;
      const ab = table.get(code);
      if (!ab) throw new RangeError(`DIE at 0x${offset.toString(16)}: abbreviation code ${code} is not in the table at 0x${u.abbrevOffset.toString(16)}`);
      const attrs = !keep || keep.has(ab.tag) ? new Map<number, RawValue>() : scratch;
      attrs.clear();
      for (const a of ab.attrs) attrs.set(a.at, readRaw(r, a.form, ctx, a.implicit, u.offset));
      return { offset, ab, attrs };
    };
  }

  /** the DIE a reference attribute points at */
  ref(d: Die, at: number): Die | undefined {
    const v = this.attr(d, at);
    return v?.kind === 'ref' ? this.dieAt(v.offset) : undefined;
  }

  // ---------------------------------------------------------------- internals

  private tree(u: Unit): { root: Die | null; byOffset: Map<number, Die> } {
    let t = this.trees.get(u.offset);
    if (t) return t;
    t = { root: null, byOffset: new Map() };
    this.trees.set(u.offset, t);
    if (u.error) return t;
    try {
      this.parseDies(u, t);
    } catch (e) {
      u.error = `unit at 0x${u.offset.toString(16)}: ${errText(e)}`;
      t.root = null;
      t.byOffset.clear();
    }
    return t;
  }

  private abbrevTable(offset: number): Map<number, Abbrev> {
    let m = this.abbrevs.get(offset);
    if (m) return m;
    m = new Map();
    const a = this.s.abbrev;
    if (!a) throw new RangeError('no .debug_abbrev section');
    if (offset >= a.length) throw new RangeError(`abbreviation offset 0x${offset.toString(16)} is past .debug_abbrev`);
    const r = new ByteReader(a, this.little, offset);
    for (;;) {
      const code = r.uleb();
      if (code === 0) break;
      const tag = r.uleb();
      const children = r.u8() !== 0;
      const attrs: Abbrev['attrs'] = [];
      for (;;) {
        const at = r.uleb(), form = r.uleb();
        if (at === 0 && form === 0) break;
        attrs.push({ at, form, implicit: form === DW_FORM.implicit_const ? r.slebBig() : 0n });
      }
      m.set(code, { tag, children, attrs });
    }
    this.abbrevs.set(offset, m);
    return m;
  }

  private parseDies(u: Unit, t: { root: Die | null; byOffset: Map<number, Die> }, headOnly = false): void {
    const info = this.s.info as Uint8Array;
    const table = this.abbrevTable(u.abbrevOffset);
    const ctx: FormContext = { offsetSize: u.offsetSize, addressSize: u.addressSize, version: u.version, str: this.s.str, lineStr: this.s.lineStr };
    const r = new ByteReader(info.subarray(0, u.end), this.little, u.dieOffset);
    const stack: Die[] = [];
    while (r.pos < u.end) {
      const offset = r.pos;
      const code = r.uleb();
      if (code === 0) {
        stack.pop();
        if (stack.length === 0 && t.root) break;
        continue;
      }
      const ab = table.get(code);
      if (!ab) throw new RangeError(`DIE at 0x${offset.toString(16)}: abbreviation code ${code} is not in the table at 0x${u.abbrevOffset.toString(16)}`);
      const attrs = new Map<number, RawValue>();
      for (const a of ab.attrs) attrs.set(a.at, readRaw(r, a.form, ctx, a.implicit, u.offset));
      const parent = stack.length ? stack[stack.length - 1] : null;
      const die: Die = { offset, tag: ab.tag, attrs, parent, children: [], unit: u };
      if (parent) parent.children.push(die);
      else if (!t.root) t.root = die;
      else break; // a second top-level DIE: the unit is over
      t.byOffset.set(offset, die);
      if (headOnly) break;
      if (ab.children) {
        if (stack.length >= MAX_DEPTH) throw new RangeError(`DIE at 0x${offset.toString(16)}: nested more than ${MAX_DEPTH} levels`);
        stack.push(die);
      }
      if (!parent && !ab.children) break;
    }
  }

  private resolve(u: Unit, v: RawValue, at: number): AttrValue {
    switch (v.kind) {
      case 'strx': return { kind: 'string', value: this.strx(u, v.index) };
      case 'addr': return this.reloc ? { kind: 'addr', value: this.out(v.value) } : v;
      case 'addrx': return { kind: 'addr', value: this.out(this.addrx(u, v.index)) };
      case 'block': return this.reloc && EXPR_ATS.has(at) ? { kind: 'block', value: this.expr(u, v.value) } : v;
      case 'loclistx': case 'rnglistx': {
        // DWARF 5: an index into the offsets array after the unit's loclists/rnglists base; the value is an offset from that base
        const base = this.rootUint(u, v.kind === 'loclistx' ? DW_AT.loclists_base : DW_AT.rnglists_base) ?? 12n;
        return { kind: 'secOffset', value: base + v.index * BigInt(u.offsetSize) };
      }
      case 'secOffset': return v;
      default:
        void at;
        return v;
    }
  }

  private rootUint(u: Unit, at: number): bigint | undefined {
    const root = this.head(u);
    const v = root?.attrs.get(at);
    return v && (v.kind === 'uint' || v.kind === 'secOffset') ? v.value : undefined;
  }

  private strx(u: Unit, index: bigint): string {
    const so = this.s.strOffsets, str = this.s.str;
    if (!so || !str) throw new RangeError('strx without .debug_str_offsets / .debug_str');
    const base = this.rootUint(u, DW_AT.str_offsets_base) ?? 8n;
    const at = base + index * BigInt(u.offsetSize);
    if (at + BigInt(u.offsetSize) > BigInt(so.length)) throw new RangeError(`string index ${index} past .debug_str_offsets`);
    const off = new ByteReader(so, this.little).uintAt(Number(at), u.offsetSize);
    if (off >= BigInt(str.length)) throw new RangeError(`string offset 0x${off.toString(16)} past .debug_str`);
    return strAt(str, Number(off));
  }

  private addrx(u: Unit, index: bigint): bigint {
    const a = this.s.addr;
    if (!a) throw new RangeError('addrx without .debug_addr');
    const base = this.rootUint(u, DW_AT.addr_base) ?? 8n;
    const at = base + index * BigInt(u.addressSize);
    if (at + BigInt(u.addressSize) > BigInt(a.length)) throw new RangeError(`address index ${index} past .debug_addr`);
    return new ByteReader(a, this.little).uintAt(Number(at), u.addressSize);
  }
}

function bad(offset: number, end: number, error: string): Unit {
  return { offset, end, version: 0, unitType: 0, offsetSize: 4, addressSize: 8, abbrevOffset: 0, dieOffset: end, error };
}

function errText(e: unknown): string { return e instanceof Error ? e.message : String(e); }

/** attributes holding a location expression whose DW_OP_addr a relocated view moves: location, call_value, GNU_call_site_value */
const EXPR_ATS: ReadonlySet<number> = new Set([DW_AT.location, 0x7e, 0x2111]);

const cache = new WeakMap<ElfImage, DebugInfo>();

/** The image's .debug_info reader (made once per image; nothing is parsed until asked). */
export function debugInfoOf(image: ElfImage): DebugInfo {
  let d = cache.get(image);
  if (d) return d;
  const get = (name: string): Uint8Array | undefined => {
    const s = image.section(name);
    return s && s.data.length ? sectionContents(s, image.elfClass, image.endian === 'little', image.path) : undefined;
  };
  d = new DebugInfo({
    info: get('.debug_info'), abbrev: get('.debug_abbrev'), str: get('.debug_str'), lineStr: get('.debug_line_str'),
    strOffsets: get('.debug_str_offsets'), addr: get('.debug_addr'),
    loclists: get('.debug_loclists'), rnglists: get('.debug_rnglists'), loc: get('.debug_loc'), ranges: get('.debug_ranges'),
    aranges: get('.debug_aranges'),
  }, image.endian === 'little');
  cache.set(image, d);
  return d;
}

/**
 * Make `view` (an image of the same file seen at other addresses: a kernel
 * moved by KASLR) read its debug information relocated: debugInfoOf(view)
 * is then `base`'s reader relocated, sharing its parsed DIEs.
 */
export function relocatedDebugInfo(view: ElfImage, base: ElfImage, reloc: AddressRelocation): DebugInfo {
  const d = debugInfoOf(base).relocated(reloc);
  cache.set(view, d);
  return d;
}
