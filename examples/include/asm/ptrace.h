/*
 * <asm/ptrace.h> for kprobe-debug modules: struct pt_regs as each arch lays
 * it out (the fields the kprobes engine fills, in Linux's order) and the
 * accessors Linux 6.1's arch/{x86,arm64,riscv}/include/asm/ptrace.h give,
 * with their names, types and semantics: user_mode(), instruction_pointer(),
 * regs_return_value(), kernel_stack_pointer(), user_stack_pointer(),
 * frame_pointer(), regs_get_register() (by byte offset in struct pt_regs),
 * regs_get_kernel_argument(), regs_get_kernel_stack_nth().
 * The emulated kernel's stacks are THREAD_SIZE (16 KiB) and aligned to it,
 * as Linux's are on these arches, so regs_within_kernel_stack holds.
 */
#ifndef _KP_ASM_PTRACE_H
#define _KP_ASM_PTRACE_H

#include <linux/types.h>
#include <linux/stddef.h>

#define THREAD_SIZE (16UL * 1024)

#if defined(__x86_64__)

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* arch/x86/include/uapi/asm/processor-flags.h, asm/segment.h */
#define X86_EFLAGS_IF 0x00000200
#define __KERNEL_CS (2 * 8)
#define __KERNEL_DS (3 * 8)
#define __USER_DS (5 * 8 + 3)
#define __USER_CS (6 * 8 + 3)

/* the CPL in the saved cs: 3 for user mode */
static inline int user_mode(struct pt_regs *regs) { return !!(regs->cs & 3); }
static inline int v8086_mode(struct pt_regs *regs) { return 0; }
static inline bool user_64bit_mode(struct pt_regs *regs) { return regs->cs == __USER_CS; }
static inline unsigned long regs_return_value(struct pt_regs *regs) { return regs->ax; }
static inline void regs_set_return_value(struct pt_regs *regs, unsigned long rc) { regs->ax = rc; }
static inline unsigned long kernel_stack_pointer(struct pt_regs *regs) { return regs->sp; }
/* after a kprobe's int3: the probed address + 1 */
static inline unsigned long instruction_pointer(struct pt_regs *regs) { return regs->ip; }
static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val) { regs->ip = val; }
static inline unsigned long frame_pointer(struct pt_regs *regs) { return regs->bp; }
static inline unsigned long user_stack_pointer(struct pt_regs *regs) { return regs->sp; }
static inline void user_stack_pointer_set(struct pt_regs *regs, unsigned long val) { regs->sp = val; }
static inline bool regs_irqs_disabled(struct pt_regs *regs) { return !(regs->flags & X86_EFLAGS_IF); }

#define MAX_REG_OFFSET (offsetof(struct pt_regs, ss))
static inline unsigned long regs_get_register(struct pt_regs *regs, unsigned int offset)
{
	if (offset > MAX_REG_OFFSET)
		return 0;
	return *(unsigned long *)((unsigned long)regs + offset);
}

#define NR_REG_ARGUMENTS 6
static inline unsigned long regs_get_kernel_stack_nth(struct pt_regs *regs, unsigned int n);
/* the n-th argument of the probed function at its entry (from 0): di si dx cx r8 r9, then the stack */
static inline unsigned long regs_get_kernel_argument(struct pt_regs *regs, unsigned int n)
{
	static const unsigned int argument_offs[] = {
		offsetof(struct pt_regs, di), offsetof(struct pt_regs, si), offsetof(struct pt_regs, dx),
		offsetof(struct pt_regs, cx), offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	};

	if (n >= NR_REG_ARGUMENTS) {
		/* the return address is at sp */
		n -= NR_REG_ARGUMENTS - 1;
		return regs_get_kernel_stack_nth(regs, n);
	}
	return regs_get_register(regs, argument_offs[n]);
}

#elif defined(__aarch64__)

struct pt_regs {
	unsigned long regs[31];
	unsigned long sp, pc, pstate;
};

/* arch/arm64/include/uapi/asm/ptrace.h */
#define PSR_MODE_EL0t 0x00000000
#define PSR_MODE_EL1t 0x00000004
#define PSR_MODE_EL1h 0x00000005
#define PSR_MODE_EL2t 0x00000008
#define PSR_MODE_EL2h 0x00000009
#define PSR_MODE_EL3t 0x0000000c
#define PSR_MODE_EL3h 0x0000000d
#define PSR_MODE_MASK 0x0000000f
#define PSR_MODE32_BIT 0x00000010
#define PSR_F_BIT 0x00000040
#define PSR_I_BIT 0x00000080
#define PSR_A_BIT 0x00000100
#define PSR_D_BIT 0x00000200
#define PSR_SSBS_BIT 0x00001000
#define PSR_PAN_BIT 0x00400000
#define PSR_UAO_BIT 0x00800000
#define PSR_DIT_BIT 0x01000000
#define PSR_V_BIT 0x10000000
#define PSR_C_BIT 0x20000000
#define PSR_Z_BIT 0x40000000
#define PSR_N_BIT 0x80000000

#define user_mode(regs) (((regs)->pstate & PSR_MODE_MASK) == PSR_MODE_EL0t)
#define compat_user_mode(regs) (((regs)->pstate & (PSR_MODE32_BIT | PSR_MODE_MASK)) == (PSR_MODE32_BIT | PSR_MODE_EL0t))
#define processor_mode(regs) ((regs)->pstate & PSR_MODE_MASK)
#define irqs_priority_unmasked(regs) 1
#define interrupts_enabled(regs) (!((regs)->pstate & PSR_I_BIT))
#define fast_interrupts_enabled(regs) (!((regs)->pstate & PSR_F_BIT))
#define procedure_link_pointer(regs) ((regs)->regs[30])
#define compat_sp regs[13]

static inline unsigned long user_stack_pointer(struct pt_regs *regs)
{
	if (compat_user_mode(regs))
		return regs->compat_sp;
	return regs->sp;
}
static inline unsigned long regs_return_value(struct pt_regs *regs) { return regs->regs[0]; }
static inline void regs_set_return_value(struct pt_regs *regs, unsigned long rc) { regs->regs[0] = rc; }
static inline unsigned long kernel_stack_pointer(struct pt_regs *regs) { return regs->sp; }
/* the brk's own address for a kprobe */
static inline unsigned long instruction_pointer(struct pt_regs *regs) { return regs->pc; }
static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val) { regs->pc = val; }
static inline unsigned long frame_pointer(struct pt_regs *regs) { return regs->regs[29]; }
static inline int regs_irqs_disabled(struct pt_regs *regs) { return (regs->pstate & PSR_I_BIT) != 0; }

/* x31 reads as zero (xzr) */
static inline unsigned long pt_regs_read_reg(const struct pt_regs *regs, int r) { return (r == 31) ? 0 : regs->regs[r]; }

#define MAX_REG_OFFSET offsetof(struct pt_regs, pstate)
static inline u64 regs_get_register(struct pt_regs *regs, unsigned int offset)
{
	offset >>= 3;
	if (offset <= 30)
		return regs->regs[offset];
	if (offset == offsetof(struct pt_regs, sp) >> 3)
		return regs->sp;
	if (offset == offsetof(struct pt_regs, pc) >> 3)
		return regs->pc;
	if (offset == offsetof(struct pt_regs, pstate) >> 3)
		return regs->pstate;
	return 0;
}

#define NR_REG_ARGUMENTS 8
static inline unsigned long regs_get_kernel_argument(struct pt_regs *regs, unsigned int n)
{
	if (n < NR_REG_ARGUMENTS)
		return pt_regs_read_reg(regs, n);
	return 0;
}

#elif defined(__riscv)

struct pt_regs {
	unsigned long epc, ra, sp, gp, tp, t0, t1, t2, s0, s1, a0, a1, a2, a3, a4, a5, a6, a7;
	unsigned long s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, t3, t4, t5, t6;
	unsigned long status, badaddr, cause, orig_a0;
};

/* arch/riscv/include/asm/csr.h (S-mode kernel: SR_PP is SR_SPP, SR_PIE is SR_SPIE) */
#define SR_SIE 0x00000002UL
#define SR_MIE 0x00000008UL
#define SR_SPIE 0x00000020UL
#define SR_MPIE 0x00000080UL
#define SR_SPP 0x00000100UL
#define SR_MPP 0x00001800UL
#define SR_FS 0x00006000UL
#define SR_SUM 0x00040000UL
#define SR_MXR 0x00080000UL
#define SR_UXL 0x300000000UL
#define SR_UXL_64 0x200000000UL
#define SR_IE SR_SIE
#define SR_PIE SR_SPIE
#define SR_PP SR_SPP

/* SPP: the privilege the trap came from (set: supervisor, the kernel) */
#define user_mode(regs) (((regs)->status & SR_PP) == 0)

#define MAX_REG_OFFSET offsetof(struct pt_regs, orig_a0)

static inline unsigned long instruction_pointer(struct pt_regs *regs) { return regs->epc; }
static inline void instruction_pointer_set(struct pt_regs *regs, unsigned long val) { regs->epc = val; }
#define profile_pc(regs) instruction_pointer(regs)
static inline unsigned long user_stack_pointer(struct pt_regs *regs) { return regs->sp; }
static inline void user_stack_pointer_set(struct pt_regs *regs, unsigned long val) { regs->sp = val; }
static inline unsigned long kernel_stack_pointer(struct pt_regs *regs) { return regs->sp; }
static inline unsigned long frame_pointer(struct pt_regs *regs) { return regs->s0; }
static inline void frame_pointer_set(struct pt_regs *regs, unsigned long val) { regs->s0 = val; }
static inline unsigned long regs_return_value(struct pt_regs *regs) { return regs->a0; }
static inline void regs_set_return_value(struct pt_regs *regs, unsigned long val) { regs->a0 = val; }
static inline int regs_irqs_disabled(struct pt_regs *regs) { return !(regs->status & SR_PIE); }

static inline unsigned long regs_get_register(struct pt_regs *regs, unsigned int offset)
{
	if (offset > MAX_REG_OFFSET)
		return 0;
	return *(unsigned long *)((unsigned long)regs + offset);
}

#define NR_REG_ARGUMENTS 8
static inline unsigned long regs_get_kernel_argument(struct pt_regs *regs, unsigned int n)
{
	static const int nr_reg_arguments = 8;
	static const unsigned int argument_offs[] = {
		offsetof(struct pt_regs, a0), offsetof(struct pt_regs, a1), offsetof(struct pt_regs, a2),
		offsetof(struct pt_regs, a3), offsetof(struct pt_regs, a4), offsetof(struct pt_regs, a5),
		offsetof(struct pt_regs, a6), offsetof(struct pt_regs, a7),
	};

	if (n < nr_reg_arguments)
		return regs_get_register(regs, argument_offs[n]);
	return 0;
}

#else
#error "struct pt_regs: x86_64, aarch64 or riscv64"
#endif

#define GET_IP(regs) (instruction_pointer(regs))
#define GET_USP(regs) (user_stack_pointer(regs))
#define GET_FP(regs) (frame_pointer(regs))

/* addr lies on the same kernel stack as the probed context's sp */
static inline int regs_within_kernel_stack(struct pt_regs *regs, unsigned long addr)
{
	return ((addr & ~(THREAD_SIZE - 1)) == (kernel_stack_pointer(regs) & ~(THREAD_SIZE - 1)));
}

/* the n-th word on the kernel stack of the probed context (0: at sp); 0 beyond that stack */
static inline unsigned long regs_get_kernel_stack_nth(struct pt_regs *regs, unsigned int n)
{
	unsigned long *addr = (unsigned long *)kernel_stack_pointer(regs);

	addr += n;
	if (regs_within_kernel_stack(regs, (unsigned long)addr))
		return *addr;
	return 0;
}

#endif
