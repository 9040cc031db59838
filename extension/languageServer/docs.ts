/**
 * Hover and completion text for the handler language, written for this
 * project. Keyed by name; the handler-language tables (analysis.ts) decide
 * which names exist, these only explain them.
 */

export const BUILTIN_DOCS: Readonly<Record<string, string>> = {
  printk: 'Formats its arguments like the kernel printf and appends the result to the kernel log as a probe message. '
    + 'Supported conversions: %d %i %u %x %lx %llx %ld %lld %p %px %s %c and %% (plus %pS/%ps for symbolized addresses).',
  dump_stack: 'Writes a backtrace of the probed context (the interrupted task\'s kernel stack) to the kernel log.',
  ktime_get: 'Returns the emulated machine\'s monotonic clock in nanoseconds. Subtract two readings to time a function.',
  regs_return_value: 'Reads the return-value register of the probed context (rax on x86_64, x0 on aarch64, a0 on riscv64). '
    + 'Meaningful in a kretprobe return handler.',
  smp_processor_id: 'Returns the number of the emulated CPU the handler is running on.',
  jiffies: 'The kernel tick counter of the emulated machine.',
  symbol: 'Looks up a kernel symbol by name in the loaded image and returns its address. The name must be a string literal; '
    + 'an unknown name is reported against the image.',
};

export const HANDLER_KIND_DOCS: Readonly<Record<string, string>> = {
  pre: 'Runs just before the probed instruction executes, with `regs` holding the CPU state at the probe point. '
    + 'Return 0 to let the instruction be single-stepped normally; to send execution elsewhere, assign the program counter '
    + '(regs->ip on x86_64) and return non-zero. Once a kprobe without a post handler is jump-optimized, such a change of '
    + 'the program counter no longer takes effect.',
  post: 'Runs right after the probed instruction has been single-stepped. `flags` is passed through and is always 0.',
  fault: 'Runs when a fault happens while the pre handler runs or while the probed instruction is being single-stepped; '
    + '`trapnr` is the architecture\'s trap number. Return 0 to let the kernel handle the fault as usual.',
  entry: 'kretprobe only: runs when the probed function is entered, before its return address is hijacked. '
    + 'Store per-call state in `ri->data` (data_size bytes). A non-zero return value skips this call (no return handler runs for it).',
  return: 'kretprobe only: runs when the probed function returns. `regs_return_value(regs)` is the value it returned; '
    + '`ri->ret_addr` is where it returns to.',
  jprobe: 'A jprobe body runs on entry to the probed function with the function\'s arguments in the argument registers '
    + '(regs->di, regs->si, ... on x86_64); the function then runs as if the probe were not there.',
};

export const PROBE_KEYWORD_DOCS: Readonly<Record<string, string>> = {
  kprobe: 'Probe one instruction: a symbol, symbol+offset, a source line (file.c:42) or an address. '
    + 'Handlers: pre, post, fault.',
  kretprobe: 'Probe a function\'s entry and return. Options: maxactive=N (instances that may be pending at once), '
    + 'data_size=N (bytes of per-instance data in ri->data). Handlers: entry, return.',
  jprobe: 'Run a body on entry to a function, with its arguments in the registers. The body is given directly in braces.',
  kwatch: 'Watch memory with a debug register (register_kwatch): `kwatch SYMBOL|SYMBOL+off|0xADDR len=N type=w|rw|x { body }`. '
    + 'The body runs at each access (data: after it; execute: before the instruction) with `regs`, `debugreg` (the register number), '
    + '`addr` (the address accessed), `access` (HW_BREAKPOINT_R / _W / _X), `old` and `new` (the watched bytes before and after).',
  uprobe: 'Probe one instruction of a user program: PATH:0xOFFSET (file offset) or PATH:symbol[+off], the path in the machine\'s '
    + 'filesystem. Inserted in every process mapping the file, now and after exec. Handlers: pre, fault.',
  uretprobe: 'Probe a user program function\'s return: PATH:symbol (or PATH:0xOFFSET of its entry). Handlers: entry, return.',
  image: 'The kernel ELF image the probes are written against (path relative to this file). '
    + 'Symbols and the register set are checked against it.',
};

export const CONTEXT_VARIABLE_DOCS: Readonly<Record<string, string>> = {
  p: 'The kprobe being hit: addr, symbol_name, offset, nmissed, flags.',
  regs: 'The saved CPU registers (pt_regs) at the probe point. Writable: a pre handler that changes the program counter '
    + 'and returns non-zero resumes elsewhere (not once the probe is jump-optimized).',
  ri: 'The kretprobe instance of this call: ret_addr, task, data (`char data[]`: data_size private bytes, ri->data[i] or *(u64 *)ri->data).',
  trapnr: 'Fault handlers: the trap number of the fault being handled.',
  current: 'The task running on the probed CPU: pid, comm, mm.',
  flags: 'Post handlers: the flags argument (always 0).',
};
