/**
 * DAP dataBreakpointInfo (the Variables view's "Break on Value Change", a
 * watch expression's, "Add Data Breakpoint at Address"): what a data
 * breakpoint would watch, its size from the C type.
 *
 *   variablesReference + name  a variable the view shows: its C name
 *                              (evaluateName) evaluated in the frame the
 *                              reference belongs to (`w->checksum` under a
 *                              pointer local of worker_fn)
 *   frameId + name             an expression in that frame
 *   name alone                 an expression over memory (globals)
 *   asAddress                  an address (VS Code's prompt sends `0x...`
 *                              and its `+ N` as bytes; other clients may
 *                              send `&sym` or `ADDR/N`)
 *
 * A frame's argument or local may be watched where it lives in memory (a
 * stack slot); one the compiler keeps in a register has no address: the
 * answer says so. An unknown or stale variables reference or frame is an
 * error (thrown: the session answers it as a DAP error).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress, parseAddress } from '../emulator/debug/index';
import type { DataTarget, DebugTarget } from '../emulator/debug/index';
import { dataIdOf } from './breakpointIds';
import { ARGS_SCOPE_BASE, FRAME_STRIDE, GLOBALS_SCOPE_BASE, StopInspector } from './inspector';

type InfoBody = DebugProtocol.DataBreakpointInfoResponse['body'];

export interface DataInfoContext {
  target: DebugTarget;
  inspector: StopInspector;
}

const none = (description: string): InfoBody => ({ dataId: null, description });

export function dataBreakpointInfo(ctx: DataInfoContext, args: DebugProtocol.DataBreakpointInfoArguments): InfoBody {
  const { inspector: insp } = ctx;
  const name = args.name ?? '';
  if (args.asAddress) return addressInfo(ctx, name, args.bytes, args.frameId);
  let expression = name;
  let frame: { cpuIndex: number; frameId: number } | undefined;
  let frameLocal = false;
  if (args.variablesReference !== undefined) {
    const ref = args.variablesReference;
    frame = insp.frameOfRef(ref);
    if (!frame) throw new Error(`dataBreakpointInfo: variables reference ${ref} is unknown or from an earlier stop: expand '${name}' again from its scope`);
    const v = insp.variables(ref).find(x => x.name === name);
    if (!v) return none(`no variable '${name}' under variables reference ${ref}`);
    // registers and values without a C name have no address
    if (!v.evaluateName) return none(`'${name}' has no address: a data breakpoint needs a variable or a memory location`);
    expression = v.evaluateName;
    frameLocal = ref >= ARGS_SCOPE_BASE && ref < GLOBALS_SCOPE_BASE;
  } else if (args.frameId !== undefined) {
    frame = insp.frameOfRef(args.frameId);
    if (!frame || args.frameId >= ARGS_SCOPE_BASE) throw new Error(`dataBreakpointInfo: unknown frame ${args.frameId}: the stack changed since; pick the frame again`);
  }
  const t = target(ctx, expression, frame);
  if (typeof t === 'string') {
    return none(/has no address here: it is in register/.test(t)
      ? `${t}: the debug registers watch memory addresses, and the compiler keeps '${expression}' in a register at this point (watch something it is stored to, or break on the lines that change it)`
      : t);
  }
  const r = watchable(ctx, t);
  if (r.dataId && frameLocal) {
    // a stack slot: the same bytes are another frame's once this function returns
    const fn = frame ? insp.stackTrace({ threadId: frame.cpuIndex + 1, startFrame: frame.frameId % FRAME_STRIDE, levels: 1 }).stackFrames[0]?.name : undefined;
    r.description += ` (a stack slot${fn ? ` of ${fn}` : ''}: other data once the function returns)`;
  }
  return r;
}

/** An expression's address and size: in a frame (its names, its registers), else over memory. */
function target(ctx: DataInfoContext, expression: string, frame: { cpuIndex: number; frameId: number } | undefined): DataTarget | string {
  const { target: t, inspector: insp } = ctx;
  if (!frame) return t.dataTarget(expression);
  const index = frame.frameId % FRAME_STRIDE;
  const state = insp.frameState(frame.cpuIndex, index);
  return t.dataTarget(expression, {
    cpuIndex: frame.cpuIndex, stop: insp.probeStopFor(frame.cpuIndex),
    frame: state ? { index, state } : undefined, image: insp.frameImage(frame.cpuIndex, index),
  });
}

/**
 * An address: `0x...` / decimal with `bytes` (VS Code's prompt: its `+ N`,
 * 1 when not given), `ADDR/N`, or an expression (`&nr_forks`, `nr_forks`):
 * the object it names, sized by its type unless `/N` says otherwise.
 */
function addressInfo(ctx: DataInfoContext, text: string, bytes: number | undefined, frameId: number | undefined): InfoBody {
  const sized = /^(.*?)\s*\/\s*(\d+)$/.exec(text.trim());
  const expr = (sized ? sized[1] : text).trim();
  const len = sized ? Number(sized[2]) : undefined;
  if (/^(0x[0-9a-f]+|\d+)$/i.test(expr)) {
    let addr: bigint;
    try { addr = parseAddress(expr, 'address'); } catch (e) { return none(e instanceof Error ? e.message : String(e)); }
    const n = len ?? bytes ?? 1;
    const sym = ctx.target.image.symbols.resolve(addr);
    let description = `${n} byte${n === 1 ? '' : 's'} at ${formatAddress(addr)}${sym ? ` <${ctx.target.symbolAt(addr) ?? sym.sym.name}>` : ''}`;
    // VS Code's prompt watches 1 byte unless told `ADDRESS + N`: say how big the object there is
    if (sym && sym.offset === 0n && sym.sym.type !== 'func' && sym.sym.size > BigInt(n)) {
      description += ` (${sym.sym.name} is ${sym.sym.size} bytes: enter "${formatAddress(addr)} + ${sym.sym.size}" to watch all of it)`;
    }
    return watchable(ctx, { addr, len: n, description });
  }
  const frame = frameId !== undefined ? ctx.inspector.frameOfRef(frameId) : undefined;
  const t = target(ctx, expr, frame);
  if (typeof t === 'string') return none(t);
  return watchable(ctx, len !== undefined ? { ...t, len, description: `${t.description}, ${len} byte${len === 1 ? '' : 's'} watched` } : t);
}

/**
 * What a data breakpoint on `expression` (a variable's C name, `&sym`,
 * `*(u32 *)0x...`) or on `bytes` at an address would watch, and the access
 * kinds the CPU's debug registers can watch (x86: no read-only watch).
 */
export function watchInfo(t: DebugTarget, expression: string, asAddress: boolean, bytes?: number): InfoBody {
  const unavailable = t.debugRegistersUnavailable();
  if (unavailable) return { dataId: null, description: `data breakpoints need debug registers: ${unavailable}` };
  let w: { addr: bigint; len: number; description: string } | string;
  if (asAddress) {
    let addr: bigint | undefined;
    try { addr = parseAddress(expression.trim(), 'address'); } catch (e) { w = e instanceof Error ? e.message : String(e); }
    w ??= { addr: addr as bigint, len: bytes ?? 1, description: `${bytes ?? 1} byte(s) at ${expression.trim()}` };
  } else {
    w = t.dataTarget(expression);
    if (typeof w !== 'string' && bytes !== undefined) w = { ...w, len: bytes };
  }
  if (typeof w === 'string') return { dataId: null, description: w };
  const bad = t.validateWatch({ addr: w.addr, len: w.len, type: 'w' });
  if (bad) return { dataId: null, description: `${w.description}: the debug registers cannot watch it: ${bad.reason}` };
  const accessTypes: DebugProtocol.DataBreakpointAccessType[] = t.validateWatch({ addr: w.addr, len: w.len, type: 'r' }) ? ['write', 'readWrite'] : ['read', 'write', 'readWrite'];
  return { dataId: dataIdOf(w.addr, w.len), description: w.description, accessTypes, canPersist: true };
}

/** The debug registers' verdict on a target (alignment, length, access kinds) with its description. */
function watchable(ctx: DataInfoContext, t: DataTarget): InfoBody {
  const r = watchInfo(ctx.target, formatAddress(t.addr), true, t.len);
  if (r.dataId) return { ...r, description: t.description };
  return none(r.description.replace(/^\d+ byte\(s\) at \S+/, t.description));
}
