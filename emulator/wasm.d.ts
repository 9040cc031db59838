/**
 * The part of the WebAssembly JavaScript API the emulator uses (guest RAM in
 * emulator/memory/guestRam.ts, the translator in emulator/jit). TypeScript's
 * ES2022 library without DOM does not declare it; node provides it.
 */
declare namespace WebAssembly {
  interface MemoryDescriptor { initial: number; maximum?: number; shared?: boolean }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  interface TableDescriptor { element: 'anyfunc'; initial: number; maximum?: number }
  class Table {
    constructor(descriptor: TableDescriptor);
    readonly length: number;
    get(index: number): unknown;
    set(index: number, value: unknown): void;
    grow(delta: number): number;
  }
  type ImportValue = Memory | Table | ((...args: number[]) => number | void);
  type Imports = Record<string, Record<string, ImportValue>>;
  type Exports = Record<string, unknown>;
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  function validate(bytes: Uint8Array): boolean;
  class CompileError extends Error {}
  class LinkError extends Error {}
  class RuntimeError extends Error {}
}
