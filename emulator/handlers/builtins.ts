/** The functions and constants a snippet can use, with their signatures and one-line docs (for completion/hover). */

export interface BuiltinInfo {
  name: string;
  signature: string;
  doc: string;
  /** handler kinds it is restricted to (all when absent) */
  kinds?: readonly string[];
}

export const BUILTINS: readonly BuiltinInfo[] = [
  { name: 'printk', signature: 'int printk(const char *fmt, ...)', doc: 'Write a formatted message to the kernel log (kernel vsprintf conversions; %p prints the raw address). Returns the number of characters.' },
  { name: 'pr_info', signature: 'int pr_info(const char *fmt, ...)', doc: 'printk at KERN_INFO level.' },
  { name: 'pr_warn', signature: 'int pr_warn(const char *fmt, ...)', doc: 'printk at KERN_WARNING level.' },
  { name: 'pr_err', signature: 'int pr_err(const char *fmt, ...)', doc: 'printk at KERN_ERR level.' },
  { name: 'dump_stack', signature: 'void dump_stack(void)', doc: 'Print a backtrace of the probed context to the kernel log.' },
  { name: 'ktime_get', signature: 'ktime_t ktime_get(void)', doc: 'Virtual time since boot in nanoseconds (signed 64-bit).' },
  { name: 'ktime_get_ns', signature: 'u64 ktime_get_ns(void)', doc: 'Virtual time since boot in nanoseconds (unsigned 64-bit).' },
  { name: 'ktime_sub', signature: 'ktime_t ktime_sub(ktime_t a, ktime_t b)', doc: 'Difference a - b of two ktime values.' },
  { name: 'ktime_to_ns', signature: 's64 ktime_to_ns(ktime_t t)', doc: 'A ktime value in nanoseconds (identity in this model).' },
  { name: 'regs_return_value', signature: 'unsigned long regs_return_value(struct pt_regs *regs)', doc: "The probed function's return-value register (meaningful in kretprobe return handlers)." },
  { name: 'smp_processor_id', signature: 'int smp_processor_id(void)', doc: 'Number of the CPU the handler runs on.' },
  { name: 'symbol', signature: 'unsigned long symbol(const char *name)', doc: 'Address of a kernel symbol given as a string literal; 0 when the image has no such symbol (a compile error when the symbol table is known).' },
  { name: 'user_string', signature: 'const char *user_string(const char __user *s)', doc: 'A NUL-terminated string copied from user memory (at most 4096 bytes), safely: "(fault)" when it cannot be read (strncpy_from_user without the fault).' },
  { name: 'get_user', signature: 'unsigned long get_user(const void __user *p)', doc: 'The 8 bytes at a user address, safely: 0 when it cannot be read.' },
  { name: 'strlen', signature: 'size_t strlen(const char *s)', doc: 'Length of a NUL-terminated string in emulated memory (or a literal), at most 4096.' },
  { name: 'strcmp', signature: 'int strcmp(const char *a, const char *b)', doc: 'Compare two NUL-terminated strings: <0, 0 or >0.' },
  { name: 'strncmp', signature: 'int strncmp(const char *a, const char *b, size_t n)', doc: 'Compare at most n characters of two strings.' },
  { name: 'memcmp', signature: 'int memcmp(const void *a, const void *b, size_t n)', doc: 'Compare n bytes of emulated memory (n at most 65536).' },
  { name: 'unregister_kprobe', signature: 'int unregister_kprobe(struct kprobe *p)', doc: 'Unregister this probe (p). Deferred: carried out when the scheduling round ends (every CPU ran its quantum), as a work item would (Linux may sleep here, which a handler must not). Returns 0 when queued.' },
  { name: 'disable_kprobe', signature: 'int disable_kprobe(struct kprobe *p)', doc: 'Disable this probe (p): [DISABLED], its handlers stop running. Deferred like unregister_kprobe. Returns 0 when queued.' },
  { name: 'enable_kprobe', signature: 'int enable_kprobe(struct kprobe *p)', doc: 'Enable this probe (p) again. Deferred like unregister_kprobe. Returns 0 when queued.' },
  { name: 'unregister_kretprobe', signature: 'int unregister_kretprobe(struct kretprobe *rp)', doc: 'Unregister this return probe (ri->rp). Deferred like unregister_kprobe. Returns 0 when queued.', kinds: ['entry', 'return'] },
  { name: 'disable_kretprobe', signature: 'int disable_kretprobe(struct kretprobe *rp)', doc: 'Disable this return probe (ri->rp). Deferred like unregister_kprobe. Returns 0 when queued.', kinds: ['entry', 'return'] },
  { name: 'enable_kretprobe', signature: 'int enable_kretprobe(struct kretprobe *rp)', doc: 'Enable this return probe (ri->rp) again. Deferred like unregister_kprobe. Returns 0 when queued.', kinds: ['entry', 'return'] },
  { name: 'jprobe_return', signature: 'void jprobe_return(void)', doc: 'End a jprobe body (the probed function then runs normally).', kinds: ['jprobe'] },
];

/** Names usable as values without declaration, besides the context variables. */
export const CONSTANTS: readonly { name: string; type: string; doc: string }[] = [
  { name: 'NULL', type: 'void *', doc: 'the null pointer' },
  { name: 'true', type: 'int', doc: '1' },
  { name: 'false', type: 'int', doc: '0' },
  { name: 'HW_BREAKPOINT_R', type: 'int', doc: '1: a read (the `access` of a kwatch hit)' },
  { name: 'HW_BREAKPOINT_W', type: 'int', doc: '2: a write (the `access` of a kwatch hit)' },
  { name: 'HW_BREAKPOINT_RW', type: 'int', doc: '3: HW_BREAKPOINT_R | HW_BREAKPOINT_W' },
  { name: 'HW_BREAKPOINT_X', type: 'int', doc: '4: an instruction fetch (the `access` of an execute kwatch hit)' },
  { name: 'KERN_INFO', type: 'string prefix', doc: 'log-level prefix; KERN_EMERG ... KERN_DEBUG and KERN_CONT too (written before the format string, as in C)' },
];
