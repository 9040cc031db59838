/**
 * The tracefs dynamic-event definitions (Linux Documentation/trace/
 * kprobetrace.rst and uprobetracer.rst) as data: what parse.ts makes of a
 * `kprobe_events` / `uprobe_events` line, what fetchArgs.ts evaluates at a
 * hit and format.ts prints.
 */

/** A fetch argument's value source (FETCHARG without its name and type). */
export type FetchSource =
  /** %REG: `reg` is the pt_regs name the text resolved to (aliases applied once the arch is known) */
  | { k: 'reg'; reg: string; text: string; column: number }
  /** @ADDR: memory at an absolute address */
  | { k: 'mem'; addr: bigint }
  /** @SYM[+|-offs]: memory at a data symbol plus an offset */
  | { k: 'sym'; name: string; offset: bigint; column: number }
  /** @+OFFSET (uprobes): memory at a file offset of the probed file, where the process maps it */
  | { k: 'foffs'; offset: bigint }
  /** $stackN: the N-th long on the stack */
  | { k: 'stack'; n: number }
  /** $stack: the stack pointer */
  | { k: 'stackp' }
  | { k: 'retval' }
  | { k: 'comm' }
  /** $argN (N >= 1): the N-th function argument at function entry */
  | { k: 'arg'; n: number }
  /** \IMM */
  | { k: 'imm'; value: bigint }
  /** $FIELD of an event probe: a field of the event it is attached to (FETCH_OP_TP_ARG) */
  | { k: 'field'; name: string; column: number }
  /** \"STRING" */
  | { k: 'immstr'; value: string }
  /** +|-[u]OFFS(FETCHARG): memory at the inner value plus OFFS (`user`: user-space memory) */
  | { k: 'deref'; offset: bigint; user: boolean; inner: FetchSource };

/** A fetch argument's type (u8..s64, x8..x64, string, ustring, symstr, symbol). */
export interface FetchType {
  name: string;
  kind: 'int' | 'string' | 'symbol';
  /** bytes of an integer / symbol value */
  size: 1 | 2 | 4 | 8;
  signed: boolean;
  hex: boolean;
  /** ustring: the string is read from user memory */
  user?: boolean;
  /** symstr: the string is the value's symbol, "sym+0xoff/0xsize" (sprint_symbol) */
  symstr?: boolean;
  /**
   * b<width>@<offset>/<container>: the `width` bits from bit `offset` of
   * the container (an unsigned int of `size` bytes), printed as it is
   */
  bitfield?: { width: number; offset: number };
}

export interface FetchArgDef {
  /** the argument name (NAME=, or argN) */
  name: string;
  /** the text after NAME= as written, type included (what kprobe_events lists after "name=") */
  text: string;
  source: FetchSource;
  type: FetchType;
  /** TYPE[N]: an array of N elements (consecutive values; for strings, consecutive pointers to strings) */
  count?: number;
  /** 1-based column of the argument in the definition text */
  column: number;
}

export type EventTarget =
  /** [MOD:]SYM[+offs] */
  | { kind: 'symbol'; module?: string; name: string; offset: bigint }
  /** MEMADDR */
  | { kind: 'address'; addr: bigint }
  /**
   * PATH:OFFSET[(REF_CTR_OFFSET)] (or PATH:SYM[+offs], an extension of this
   * emulator); `refCtr`: the file offset of the probe's reference counter
   * (a USDT semaphore), incremented while the probe is armed
   */
  | { kind: 'user'; path: string; offset?: bigint; symbol?: string; symOffset?: bigint; refCtr?: bigint };

/** `p...` / `r...`: define an event. */
export interface EventAdd {
  op: 'add';
  /** 'p' probe, 'r' return probe (r..., or p with the %return suffix) */
  type: 'p' | 'r';
  /** kprobes or uprobes, from the target's form (a PATH is a uprobe) */
  subsystem: 'kprobe' | 'uprobe';
  /** r[MAXACTIVE]: the kretprobe's maxactive (0 or absent: the default) */
  maxactive?: number;
  group: string;
  event: string;
  target: EventTarget;
  /** the target as written */
  targetText: string;
  /** 1-based column of the target */
  targetColumn: number;
  /** 1-based column of the definition's first word (p..., r...) */
  column?: number;
  /** 1-based column just past the definition's last word */
  endColumn?: number;
  args: FetchArgDef[];
  /** the definition text as written (comments and surrounding blanks removed) */
  text: string;
}

/**
 * `-:[GRP/]EVENT [PROBEPOINT [NAME=FETCHARG...]]`: remove an event (an empty
 * EVENT after GRP/: every event of the group); with a probe point, only the
 * probes of the event at that point whose arguments begin with those given
 * (removeMatches).
 */
export interface EventRemove {
  op: 'remove';
  group?: string;
  event: string;
  /** the words after -:[GRP/]EVENT as written */
  match?: string[];
  text: string;
}

export type EventCommand = EventAdd | EventRemove;

/** A definition error: where (1-based column in the definition text) and what was expected. */
export interface EventError {
  column: number;
  /** Linux's error_log message (errors.ts), then what was expected after ': ' */
  message: string;
  /** Linux's error code (errors.ts PROBE_ERRORS), when Linux reports this error in its error_log */
  code?: string;
  /** the errno a tracefs write gets for it, when not EINVAL (a symbol the kernel lacks: ENOENT) */
  errno?: number;
}
