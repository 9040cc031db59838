/*
 * host.c - run the sample kernel's C code as an ordinary Linux program under
 * qemu-user (x86_64, aarch64, riscv64), to check its logic without the
 * emulator. Built with -DKP_HYPERCALL_HOOK=host_hc so kprobe_image.h calls
 * host_hc() instead of trapping. A "thread" runs to completion inside
 * kp_thread_create (run-to-completion scheduling), kp_thread_exit unwinds
 * with a minimal setjmp/longjmp, and a SIGSEGV handler applies __ex_table
 * fixups. Not part of the images; see run.sh.
 */
typedef unsigned long size_t;
#if defined(__x86_64__)
#define NR_WRITE 1
#define NR_EXIT 231
#define NR_SIGACTION 13
#define PC_OFF (40 + 16 * 8)
static long sys4(long n, long a, long b, long c, long d) { long r; register long r10 __asm__("r10") = d; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory"); return r; }
#elif defined(__aarch64__)
#define NR_WRITE 64
#define NR_EXIT 94
#define NR_SIGACTION 134
#define PC_OFF 440
static long sys4(long n, long a, long b, long c, long d) { register long x8 __asm__("x8") = n; register long x0 __asm__("x0") = a; register long x1 __asm__("x1") = b; register long x2 __asm__("x2") = c; register long x3 __asm__("x3") = d; __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory"); return x0; }
#else
#define NR_WRITE 64
#define NR_EXIT 94
#define NR_SIGACTION 134
#define PC_OFF 176
static long sys4(long n, long a, long b, long c, long d) { register long a7 __asm__("a7") = n; register long x0 __asm__("a0") = a; register long x1 __asm__("a1") = b; register long x2 __asm__("a2") = c; register long x3 __asm__("a3") = d; __asm__ volatile("ecall" : "+r"(x0) : "r"(a7), "r"(x1), "r"(x2), "r"(x3) : "memory"); return x0; }
#endif
static long sys3(long n, long a, long b, long c) { return sys4(n, a, b, c, 0); }
extern void start_kernel(void);
struct ex { unsigned long insn, fixup; };
extern struct ex __start___ex_table[], __stop___ex_table[];
static long cur_cpu, cur_pid = 1, next_pid = 1, codes[64];
static long jb[32]; static int in_thread;
long my_setjmp(long *b); void my_longjmp(long *b);
#if defined(__x86_64__)
__asm__("my_setjmp: mov %rbx,(%rdi)\n mov %rbp,8(%rdi)\n mov %r12,16(%rdi)\n mov %r13,24(%rdi)\n mov %r14,32(%rdi)\n mov %r15,40(%rdi)\n lea 8(%rsp),%rdx\n mov %rdx,48(%rdi)\n mov (%rsp),%rdx\n mov %rdx,56(%rdi)\n xor %eax,%eax\n ret\n"
"my_longjmp: mov (%rdi),%rbx\n mov 8(%rdi),%rbp\n mov 16(%rdi),%r12\n mov 24(%rdi),%r13\n mov 32(%rdi),%r14\n mov 40(%rdi),%r15\n mov 48(%rdi),%rsp\n mov $1,%eax\n jmp *56(%rdi)\n");
#elif defined(__aarch64__)
__asm__("my_setjmp: stp x19,x20,[x0]\n stp x21,x22,[x0,16]\n stp x23,x24,[x0,32]\n stp x25,x26,[x0,48]\n stp x27,x28,[x0,64]\n stp x29,x30,[x0,80]\n mov x1,sp\n str x1,[x0,96]\n mov x0,#0\n ret\n"
"my_longjmp: ldp x19,x20,[x0]\n ldp x21,x22,[x0,16]\n ldp x23,x24,[x0,32]\n ldp x25,x26,[x0,48]\n ldp x27,x28,[x0,64]\n ldp x29,x30,[x0,80]\n ldr x1,[x0,96]\n mov sp,x1\n mov x0,#1\n ret\n");
#else
__asm__("my_setjmp: sd s0,0(a0)\n sd s1,8(a0)\n sd s2,16(a0)\n sd s3,24(a0)\n sd s4,32(a0)\n sd s5,40(a0)\n sd s6,48(a0)\n sd s7,56(a0)\n sd s8,64(a0)\n sd s9,72(a0)\n sd s10,80(a0)\n sd s11,88(a0)\n sd ra,96(a0)\n sd sp,104(a0)\n li a0,0\n ret\n"
"my_longjmp: ld s0,0(a0)\n ld s1,8(a0)\n ld s2,16(a0)\n ld s3,24(a0)\n ld s4,32(a0)\n ld s5,40(a0)\n ld s6,48(a0)\n ld s7,56(a0)\n ld s8,64(a0)\n ld s9,72(a0)\n ld s10,80(a0)\n ld s11,88(a0)\n ld ra,96(a0)\n ld sp,104(a0)\n li a0,1\n ret\n");
#endif
long host_hc(long nr, long a0, long a1, long a2, long a3) {
  switch (nr) {
  case 1: return sys3(NR_WRITE, 1, a0, a1);
  case 2: sys3(NR_EXIT, a0, 0, 0); return 0;
  case 3: { long pid = ++next_pid, scpu = cur_cpu, spid = cur_pid; cur_cpu = a2; cur_pid = pid;
    in_thread = 1;
    if (my_setjmp(jb) == 0) { ((void (*)(void *))a0)((void *)a1); codes[pid] = 0; }
    in_thread = 0; cur_cpu = scpu; cur_pid = spid; return pid; }
  case 4: return 0;
  case 5: codes[cur_pid] = a0; my_longjmp(jb);
  case 6: return cur_cpu;
  case 7: return cur_pid;
  case 8: case 9: return 0;
  case 10: return codes[a0];
  case 11: return 2;
  case 12: return 0; /* user_init: no programs to start */
  }
  return -38;
}
static void segv(int sig, void *info, void *uc) {
  unsigned long *rip = (unsigned long *)((char *)uc + PC_OFF);
  for (struct ex *e = __start___ex_table; e < __stop___ex_table; e++) if (e->insn == *rip) { *rip = e->fixup; return; }
  sys3(NR_WRITE, 2, (long)"unhandled fault\n", 16); sys3(NR_EXIT, 139, 0, 0);
}
#if defined(__x86_64__)
__attribute__((naked)) static void restorer(void) { __asm__("mov $15, %eax\n syscall"); }
#elif defined(__aarch64__)
__attribute__((naked)) static void restorer(void) { __asm__("mov x8, #139\n svc #0"); }
#endif
#if defined(__riscv)
struct ksa { void *h; unsigned long flags; unsigned long mask; };
#else
struct ksa { void *h; unsigned long flags; void *restorer; unsigned long mask; };
#endif
void hmain(void) {
#if defined(__riscv)
  struct ksa sa = { (void *)segv, 4, 0 };
#else
  struct ksa sa = { (void *)segv, 0x04000000 | 4 /*SA_RESTORER|SA_SIGINFO*/, (void *)restorer, 0 };
#endif
  sys4(NR_SIGACTION, 11, (long)&sa, 0, 8);
  start_kernel(); sys3(NR_EXIT, 0, 0, 0);
}
#if defined(__x86_64__)
__attribute__((naked)) void _start(void) { __asm__("and $-16, %rsp\n call hmain\n hlt"); }
#elif defined(__aarch64__)
__attribute__((naked)) void _start(void) { __asm__("bl hmain\n b ."); }
#else
__attribute__((naked)) void _start(void) { __asm__(".option push\n.option norelax\n lla gp, __global_pointer$\n.option pop\n call hmain\n j ."); }
#endif
