/**
 * The C type model the program's DWARF types are read into (dwarfCType,
 * ./ctype.ts) and the handler language computes with (emulator/handlers/
 * ctypes.ts: promotions, conversions, the built-in types): integers (with
 * an enum's enumerators), pointers, void, and the program's structs,
 * unions and arrays, which live in memory only. Pure data, no behaviour:
 * it sits with the DWARF reader so that the reader needs nothing above it.
 */

export interface IntType {
  readonly kind: 'int'; readonly size: 1 | 2 | 4 | 8; readonly signed: boolean; readonly name: string; readonly bool?: true;
  /** an enum's enumerators by value (values print by name) */
  readonly enumerators?: ReadonlyMap<bigint, string>;
}
/** `name`: how to spell it when `to` does not say it all (a function pointer: `int (*)(int)`) */
export interface PtrType { readonly kind: 'ptr'; readonly to: CType; readonly name?: string }
export interface VoidType { readonly kind: 'void' }
/** A member of a struct or union: byte offset, or bit offset + size for a bitfield. */
export interface Member { readonly name: string; readonly type: CType; readonly offset: number; readonly bits?: { readonly offset: number; readonly size: number } }
/**
 * A struct or union of the program (DWARF): `name` as C spells it
 * (`struct file`, or its typedef's name), members read on demand;
 * `origin` is what made it (the debugger expands values through it).
 */
export interface StructType {
  readonly kind: 'struct'; readonly union: boolean; readonly name: string; readonly size: number;
  members(): readonly Member[];
  readonly origin?: unknown;
}
export interface ArrayType { readonly kind: 'array'; readonly of: CType; readonly count: number; readonly origin?: unknown }
export type CType = IntType | PtrType | VoidType | StructType | ArrayType;
