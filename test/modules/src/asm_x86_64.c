/*
 * Hand-written x86_64 instructions and data carrying the relocation types
 * of arch/x86/kernel/module.c beyond what -mcmodel=kernel C emits: 64-bit
 * PC-relative data (PC64), zero-extended 32-bit absolutes (32), NONE, and
 * calls / jumps / RIP-relative accesses to labels of other sections.
 *
 * Layout (test/modules/build.sh): .text.near_* sections sit next to each
 * other, .text.far / .data.far far away; abs_* are --defsym values.
 */
__asm__(
"	.section .text.near_a, \"ax\"\n"
"	.globl	asm_entry\n"
"asm_entry:\n"
"	call	far_fn\n"
"	call	ext_func\n"
"	jmp	.Lnear_b1\n"
"	jne	near_b_fn\n"
"	movabsq	$far_data + 8, %rax\n"
"	movq	$far_data, %rax\n"
"	movl	$abs_mid, %eax\n"
"	leaq	far_data + 0x100(%rip), %rcx\n"
"	movq	ext_data(%rip), %rdx\n"
"	movl	$7, ext_data + 4(%rip)\n"
"	movl	far_data(,%rax,4), %esi\n"
"	ret\n"
"\n"
"	.section .text.near_b, \"ax\"\n"
"	.globl	near_b_fn\n"
"near_b_fn:\n"
"	nop\n"
".Lnear_b1:\n"
"	jmp	asm_entry\n"
"\n"
"	.section .text.far, \"ax\"\n"
"	.globl	far_fn\n"
"far_fn:\n"
"	call	asm_entry\n"
"	jmp	near_b_fn\n"
"\n"
"	.section .data.far, \"aw\"\n"
"	.globl	far_data\n"
"	.p2align 4\n"
"far_data:\n"
"	.quad	far_fn, far_data + 0x40, ext_data - 8, 0\n"
"\n"
"	.section .rodata.asm_rel, \"a\"\n"
"	.p2align 3\n"
"	.quad	far_data + 0x10\n"
"	.quad	ext_func\n"
"	.quad	far_fn - .\n"
"	.quad	ext_data - . - 0x1000\n"
"	.long	abs_mid\n"
"	.long	far_data - .\n"
"	.long	ext_func - . + 4\n"
"	.reloc	., R_X86_64_NONE, far_fn\n"
"	.quad	0x1234\n"
);

/*
 * Field sweeps: each relocation at offsets (. + K: S + A - P = K) or
 * absolute values (abs_zero + K) at both ends of its range.
 */
__asm__(
"	.section .rodata.sweep, \"a\"\n"
"	.p2align 3\n"
"	.irp	k, -0x80000000, -1, 0x55555555, 0x7fffffff\n"
"	.reloc	., R_X86_64_PC32, . + \\k\n"
"	.long	0\n"
"	.reloc	., R_X86_64_PLT32, . + \\k\n"
"	.long	0\n"
"	.reloc	., R_X86_64_32S, abs_zero + \\k\n"
"	.long	0\n"
"	.endr\n"
"	.irp	k, 0, 0xaaaaaaaa, 0xffffffff\n"
"	.reloc	., R_X86_64_32, abs_zero + \\k\n"
"	.long	0\n"
"	.endr\n"
"	.irp	k, -0x8000000000000000, -1, 0x7fffffffffffffff\n"
"	.reloc	., R_X86_64_PC64, . + \\k\n"
"	.quad	0\n"
"	.reloc	., R_X86_64_64, abs_zero + \\k\n"
"	.quad	0\n"
"	.endr\n"
);
