/*
 * LAR, LSL, VERR, VERW at CPL 3 on the host's own x86_64 CPU under Linux,
 * of the selectors of Linux's GDT a user program can name (__USER32_CS
 * 0x23, __USER_DS 0x2b, __USER_CS 0x33, the per-CPU __CPUNODE_SEG 0x7b,
 * __KERNEL_CS 0x10, __KERNEL_DS 0x18, null): the oracle for
 * test/system/cpu/segmentQuery.test.ts (segmentQuery-host.sh runs it).
 * Each line: selector, LAR's value and ZF, LSL's value and ZF, VERR's and
 * VERW's ZF; the destinations start at 0x1111 / 0x2222 (kept when ZF = 0).
 */
#include <stdio.h>

int main(void) {
  const unsigned sels[] = { 0x23, 0x2b, 0x33, 0x7b, 0x10, 0x18, 0 };
  for (unsigned k = 0; k < sizeof sels / sizeof sels[0]; k++) {
    unsigned long sel = sels[k], lar = 0x1111, lsl = 0x2222;
    unsigned char zl, zs, vr, vw;
    __asm__ volatile("lar %2, %0; setz %1" : "+r"(lar), "=q"(zl) : "r"(sel) : "cc");
    __asm__ volatile("lsl %2, %0; setz %1" : "+r"(lsl), "=q"(zs) : "r"(sel) : "cc");
    __asm__ volatile("verr %w1; setz %0" : "=q"(vr) : "r"(sel) : "cc");
    __asm__ volatile("verw %w1; setz %0" : "=q"(vw) : "r"(sel) : "cc");
    printf("0x%02lx lar 0x%lx %d lsl 0x%lx %d verr %d verw %d\n", sel, lar, zl, lsl, zs, vr, vw);
  }
  return 0;
}
