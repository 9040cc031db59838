/**
 * Linux's structures laid out by the vmlinux's own DWARF: member offsets
 * found by name (a dotted path through nested and anonymous structs and
 * unions, as C spells `p->ainsn.boostable` or a member of an anonymous
 * union), sizes, array lengths. Nothing is hard-coded: another config or
 * release of the kernel gives other offsets and the readers follow.
 *
 * A struct or member the vmlinux lacks is an Error naming it (the reader
 * then says which structure of this kernel it cannot read).
 */
import type { ElfImage } from '../../elf/types';
import type { CType, Member, StructType } from '../../elf/dwarf/cTypeModel';
import { typeNamed } from '../../elf/dwarf/ctype';

export interface Field {
  readonly offset: number;
  readonly type: CType;
  readonly bits?: { readonly offset: number; readonly size: number };
}

export class KernelLayout {
  private readonly structs = new Map<string, StructType>();
  private readonly fields = new Map<string, Field>();

  constructor(readonly image: ElfImage) {}

  /** `struct NAME` (or `union NAME` with kind 'union') */
  struct(name: string, kind: 'struct' | 'union' = 'struct'): StructType {
    const key = `${kind} ${name}`;
    let s = this.structs.get(key);
    if (!s) {
      const t = typeNamed(this.image, kind, name);
      if (t?.kind !== 'struct') throw new Error(`the vmlinux's DWARF has no ${key}`);
      s = t;
      this.structs.set(key, s);
    }
    return s;
  }

  size(name: string): number { return this.struct(name).size; }

  /** the member at a dotted path of `struct name` ('ainsn.boostable'), through anonymous members */
  field(name: string, path: string): Field {
    const key = `${name}:${path}`;
    const hit = this.fields.get(key);
    if (hit) return hit;
    let t: CType = this.struct(name);
    let offset = 0;
    let last: Member | undefined;
    for (const part of path.split('.')) {
      const s = t;
      if (s.kind !== 'struct') throw new Error(`struct ${name}: ${path}: ${part} is not inside a struct`);
      const found = findMember(s, part);
      if (!found) throw new Error(`the vmlinux's struct ${name} has no member ${path}`);
      offset += found.offset;
      last = found.member;
      t = found.member.type;
    }
    const f: Field = { offset, type: t, bits: last?.bits };
    this.fields.set(key, f);
    return f;
  }

  /** the byte offset of a member path */
  off(name: string, path: string): bigint { return BigInt(this.field(name, path).offset); }
}

/** a member by name, looking into anonymous struct/union members (C11 anonymous members) */
function findMember(s: StructType, name: string): { offset: number; member: Member } | undefined {
  for (const m of s.members()) {
    if (m.name === name) return { offset: m.offset, member: m };
  }
  for (const m of s.members()) {
    if (m.name === '' && m.type.kind === 'struct') {
      const inner = findMember(m.type, name);
      if (inner) return { offset: m.offset + inner.offset, member: inner.member };
    }
  }
  return undefined;
}
