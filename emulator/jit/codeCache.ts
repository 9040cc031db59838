/**
 * The code cache's records: a Unit is one translated guest page (its
 * WebAssembly module's table index, its blocks' entry instructions and
 * built IR, the instructions its helpers run, the pages it covers); a
 * CodeSpace is the translations of one decode cache (one address space and
 * privilege mode), with its page index, the hot blocks waiting for their
 * page's next translation and its pages' rewrite counts. The translator
 * (translator.ts) makes, links, drops and frees them.
 */
import type { BackendBlock } from './backend';
import type { DecodeCache } from '../cpu/decodeCache';
import type { RunnableInsn } from '../cpu/interp';
import type { VAddr } from '../memory/address';

/** bytes of a guest page: a unit translates one */
export const PAGE = 4096;

/** What the translator keeps on a decoded instruction that starts a translated block. */
export interface JitEntry { readonly unit: Unit; readonly index: number }

/** A block's IR as built (kept by its module for the page's next translation). */
export interface BuiltBlock extends Omit<BackendBlock, 'helperIndex'> {
  /** by instruction index: the instruction when it runs as a helper, else null */
  readonly helpers: readonly (RunnableInsn<unknown> | null)[];
  /** by instruction index: the pc after which the block goes on past its helper (IrBuilder.helper's `then`), else NaN */
  readonly thens: readonly VAddr[];
  /** pages the block's instructions touch */
  readonly pages: readonly number[];
}

/** One translated guest page: its module, its blocks' entry instructions, the instructions its helpers run. */
export class Unit {
  /** the index of the module's run() in the translator's function table (-1: none yet, or freed: slot) */
  get fn(): number { return this.slot.fn; }
  /** translations of its page before this one (re-translations as more of the page's blocks got hot) */
  generation = 0;
  entries: RunnableInsn<unknown>[] = [];
  helpers: RunnableInsn<unknown>[] = [];
  /** by helper index: the pc after which its block goes on past it (NaN: only the instruction's next) */
  helperThens: VAddr[] = [];
  /** the u16 table of indirect-jump targets in the page (backend.ts dispatchTable), kept alive with the module */
  tableBytes: Uint8Array | null = null;
  /** the IR of each block, by its entry instruction */
  readonly built = new Map<RunnableInsn<unknown>, BuiltBlock>();
  /** pages whose bytes the blocks cover (a block's last instruction may cross into the next page) */
  pages: number[] = [];
  bytes = 0;
  dead = false;
  /** the translator's weak reference to this unit (code-cache accounting) */
  ref: WeakRef<Unit> | null = null;
  readonly space: WeakRef<CodeSpace>;
  /**
   * its function-table index (fn -1: none, or freed), shared with the
   * translator's finalizer: the index is freed once, by drop() or when the
   * unit is collected, whichever comes first
   */
  readonly slot: FnSlot = { fn: -1 };
  /** the id of the space that translated it */
  readonly home: number;
  /**
   * the translator that made it: a CPU run by another translator later (a
   * test that turns lockstep on mid-run) translates the block again for
   * that one (a unit's table index means nothing to another translator)
   */
  owner: object | null = null;
  /** the other spaces that run it (a file's text page shared by processes: CodeSpace.adopted), weakly */
  adopters: WeakRef<CodeSpace>[] | null = null;
  constructor(space: CodeSpace, readonly key: number) { this.space = new WeakRef(space); this.home = space.id; }
}

/** A unit's function-table index, as the translator's finalizer holds it (nothing of the unit's). */
export interface FnSlot { fn: number }

let spaceCount = 0;

/** The translations of one decode cache (one address space and privilege mode). */
export class CodeSpace {
  /** the space's key in the chain table */
  readonly id = ++spaceCount;
  readonly units = new Map<number, Unit>();
  /**
   * Units of other spaces this one runs: a page array of a file's text is
   * shared by the processes mapping it (DecodeCache), and so are its
   * instructions' translations. They are in byPage too, so that a code
   * write this space hears of drops them even when the space that made
   * them is gone (and no longer hears anything).
   */
  readonly adopted = new Set<Unit>();
  /** page key -> units covering it (their own page and the one before when a block crosses; adopted ones too) */
  readonly byPage = new Map<number, Set<Unit>>();
  /** hot blocks waiting for their page's next translation */
  readonly waiting = new Map<number, Set<RunnableInsn<unknown>>>();
  /** arrivals at a page's waiting blocks since its last translation */
  readonly waitingArrivals = new Map<number, number>();
  /** invalidations per page (a page whose code keeps being rewritten stays interpreted) */
  readonly rewrites = new Map<number, number>();
  constructor(readonly cache: DecodeCache<RunnableInsn<unknown>>) {}
}

/** u in sp.byPage under every page it covers */
export function listPages(sp: CodeSpace, u: Unit): void {
  for (const p of u.pages) { let s = sp.byPage.get(p); if (!s) { s = new Set(); sp.byPage.set(p, s); } s.add(u); }
}
export function unlistPages(sp: CodeSpace, u: Unit): void {
  for (const p of u.pages) sp.byPage.get(p)?.delete(u);
}
