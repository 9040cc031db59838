/**
 * DW_OP_entry_value through call sites (parameters whose register the callee
 * has since reused): the value a register had when a frame's function was
 * entered, from what the caller's call site says it passed there. Used by the
 * debugger's frame variables (emulator/debug/variables.ts), with the caller's
 * registers as the CFI recovers them.
 */
import { DebugInfo } from './info';
import { DW_AT, Die } from './dies';
import { evalLocation } from './location';

/** A frame's caller as the CFI recovers it: the return address into it and its registers by DWARF number. */
export interface CallerFrame { returnAddress: bigint; regs: ReadonlyMap<number, bigint> }

/** DW_TAG_subprogram, lexical_block, inlined_subroutine: the scopes a call site can be nested in */
const SCOPE_TAGS = new Set([0x2e, 0x0b, 0x1d]);

const CALL_SITE_TAGS = new Set([0x48, 0x4109]); // DW_TAG_call_site, DW_TAG_GNU_call_site
const CALL_PARAM_TAGS = new Set([0x49, 0x410a]); // DW_TAG_call_site_parameter, DW_TAG_GNU_call_site_parameter
const AT_CALL_RETURN_PC = 0x7d, AT_CALL_VALUE = 0x7e, AT_GNU_CALL_SITE_VALUE = 0x2111;

/**
 * DW_OP_entry_value(DW_OP_regN): the value register N had when the frame's
 * function was entered, as the caller's call site says it passed it
 * (DW_TAG_call_site at the return address, its call_site_parameter for
 * that register, the parameter's DW_AT_call_value evaluated in the caller
 * with the registers the CFI recovers). Undefined when any of that is
 * missing: the value is then <optimized out>, never guessed.
 */
export function entryValue(di: DebugInfo, caller: CallerFrame | undefined, block: Uint8Array, read: (a: bigint, n: number) => bigint | undefined, little: boolean): bigint | undefined {
  const reg = block.length === 1 && block[0] >= 0x50 && block[0] <= 0x6f ? block[0] - 0x50 : undefined;
  if (reg === undefined || !caller) return undefined;
  const ra = caller.returnAddress;
  const u = di.unitFor(ra - 1n);
  const root = u ? di.root(u) : null;
  if (!u || !root) return undefined;
  const holds = (d: Die): boolean => di.ranges(d).some(([lo, hi]) => ra - 1n >= lo && ra - 1n < hi);
  let site: Die | undefined;
  const visit = (d: Die, depth: number): void => {
    for (const c of d.children) {
      if (site || depth > 32) return;
      if (CALL_SITE_TAGS.has(c.tag)) {
        const at = di.attr(c, AT_CALL_RETURN_PC) ?? di.attr(c, DW_AT.low_pc);
        if (at && (at.kind === 'addr' || at.kind === 'uint') && at.value === ra) site = c;
      } else if (c.children.length && SCOPE_TAGS.has(c.tag) && holds(c)) visit(c, depth + 1);
    }
  };
  visit(root, 0);
  if (!site) return undefined;
  const param = site.children.find(c => {
    if (!CALL_PARAM_TAGS.has(c.tag)) return false;
    const l = c.attrs.get(DW_AT.location);
    return l?.kind === 'block' && l.value.length === 1 && l.value[0] === 0x50 + reg;
  });
  const valueExpr = param ? (di.attr(param, AT_CALL_VALUE) ?? di.attr(param, AT_GNU_CALL_SITE_VALUE)) : undefined;
  if (!valueExpr || valueExpr.kind !== 'block') return undefined;
  const loc = evalLocation(valueExpr.value, {
    addressSize: u.addressSize, little, reg: n => caller.regs.get(n), read,
    addrx: i => di.addrIndex(u, i), baseType: o => di.baseType(u, o),
  });
  if (loc.kind === 'value') return loc.value;
  if (loc.kind === 'register') return caller.regs.get(loc.reg);
  if (loc.kind === 'memory') return loc.addr; // DW_OP_breg / lit without stack_value: the computed value
  return undefined;
}
