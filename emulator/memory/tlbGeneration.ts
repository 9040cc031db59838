/**
 * Memory.tlbGeneration values: one counter for every address space of the
 * process, so that a value put back by time travel (timetravel/snapshot.ts)
 * can never equal one a translated-code TLB saw later.
 */
let generations = 0;

/** A tlbGeneration value never used before. */
export function nextTlbGeneration(): number { return ++generations; }
