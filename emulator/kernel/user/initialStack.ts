/**
 * The initial user stack of a new process, built the way Linux's
 * fs/exec.c + fs/binfmt_elf.c create_elf_tables() do (without stack
 * randomisation):
 *
 *   stackTop - 8 .. stackTop : NULL end marker
 *   execfn string (AT_EXECFN), then the envp strings, then the argv strings
 *   (argv[0] lowest), growing down
 *   platform string (AT_PLATFORM), 16 random bytes (AT_RANDOM)
 *   (16-byte aligned) argc, argv[], NULL, envp[], NULL, auxv pairs, AT_NULL
 *
 * sp (returned) points at argc and is 16-byte aligned.
 */
import { Memory } from '../../memory/memory';
import { VAddr, fromVAddr } from '../../memory/address';

export const AT_NULL = 0, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7, AT_FLAGS = 8,
  AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14, AT_PLATFORM = 15, AT_HWCAP = 16,
  AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25, AT_EXECFN = 31;

export interface InitialStackInput {
  argv: readonly string[];
  envp: readonly string[];
  execfn: string;
  platform: string;
  /** 16 bytes for AT_RANDOM */
  random: Uint8Array;
  /** auxv entries before AT_RANDOM/AT_EXECFN/AT_PLATFORM (type, value), in order */
  auxv: readonly [number, bigint][];
  pointerSize: 4 | 8;
}

export interface InitialStack {
  sp: VAddr;
  argvAddrs: bigint[];
  envpAddrs: bigint[];
  auxv: [number, bigint][];
}

const enc = new TextEncoder();

export function buildInitialStack(mem: Memory, stackTop: VAddr, inp: InitialStackInput): InitialStack {
  const ps = inp.pointerSize;
  let p = stackTop - ps; // NULL end marker (the region is zero already)
  const pushString = (s: string): bigint => {
    const b = enc.encode(s);
    p -= b.length + 1;
    mem.writeBytes(p, b, 'uaccess');
    mem.writeBytes(p + b.length, new Uint8Array([0]), 'uaccess');
    return fromVAddr(p);
  };
  const execfn = pushString(inp.execfn);
  const envpAddrs: bigint[] = [];
  for (let i = inp.envp.length - 1; i >= 0; i--) envpAddrs.unshift(pushString(inp.envp[i]));
  const argvAddrs: bigint[] = [];
  for (let i = inp.argv.length - 1; i >= 0; i--) argvAddrs.unshift(pushString(inp.argv[i]));
  p = Math.floor(p / 16) * 16;
  const platform = pushString(inp.platform);
  p -= 16;
  mem.writeBytes(p, inp.random.subarray(0, 16), 'uaccess');
  const random = fromVAddr(p);
  p = Math.floor(p / 16) * 16;

  const auxv: [number, bigint][] = [...inp.auxv, [AT_RANDOM, random], [AT_EXECFN, execfn], [AT_PLATFORM, platform], [AT_NULL, 0n]];
  const words: bigint[] = [BigInt(inp.argv.length), ...argvAddrs, 0n, ...envpAddrs, 0n];
  for (const [k, v] of auxv) words.push(BigInt(k), v);
  let sp = p - words.length * ps;
  sp = Math.floor(sp / 16) * 16;
  const out = new Uint8Array(words.length * ps);
  const dv = new DataView(out.buffer);
  words.forEach((w, i) => {
    if (ps === 8) dv.setBigUint64(i * 8, BigInt.asUintN(64, w), true);
    else dv.setUint32(i * 4, Number(BigInt.asUintN(32, w)), true);
  });
  mem.writeBytes(sp, out, 'uaccess');
  return { sp, argvAddrs, envpAddrs, auxv };
}
