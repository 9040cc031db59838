.intel_syntax noprefix
.code64

start:
  lea rsp, [rip + stack_top]
  lea rdi, [rip + idt]
  mov [rip + idtr + 2], rdi
  lea rax, [rip + timer_isr]
  mov ecx, 0x30
  call set_gate
  lea rax, [rip + uart_isr]
  mov ecx, 0x34
  call set_gate
  lidt [rip + idtr]
  # 8259s: vectors 0x30 / 0x38, IRQ0 and IRQ4 unmasked
  mov al, 0x11; out 0x20, al; mov al, 0x30; out 0x21, al; mov al, 4; out 0x21, al; mov al, 1; out 0x21, al
  mov al, 0x11; out 0xa0, al; mov al, 0x38; out 0xa1, al; mov al, 2; out 0xa1, al; mov al, 1; out 0xa1, al
  mov al, 0xee; out 0x21, al; mov al, 0xff; out 0xa1, al
  # PIT channel 0, mode 2, count 100
  mov al, 0x34; out 0x43, al; mov al, 100; out 0x40, al; xor eax, eax; out 0x40, al
  # COM1: receive interrupt on, OUT2
  mov dx, 0x3f9; mov al, 1; out dx, al
  mov dx, 0x3fc; mov al, 0x08; out dx, al
  mov r13, 12345
  sti
main_loop:
  inc r12
  movabs rax, 6364136223846793005
  imul r13, rax
  movabs rax, 1442695040888963407
  add r13, rax
  mov rbx, r13
  shr rbx, 40
  and ebx, 0x3ffff8
  mov [rbx + 0x2000000], r13
  rdtsc
  add r14, rax
  test r12d, 0x3ff
  jnz main_loop

print_point:
  mov dx, 0x3fd
1: in al, dx
  test al, 0x20
  jz 1b
  mov eax, r12d
  shr eax, 10
  and eax, 15
  add eax, 0x61
  mov dx, 0x3f8
  out dx, al
  jmp main_loop


timer_isr:
  push rax
  inc qword ptr [rip + ticks]
  mov al, 0
  out 0x70, al
  in al, 0x71
  movzx eax, al
  add [rip + cmos_sum], rax
  mov al, 0x20
  out 0x20, al
  pop rax
  iretq


uart_isr:
  push rax
  push rdx
2: mov dx, 0x3fd
  in al, dx
  test al, 1
  jz 3f
  mov dx, 0x3f8
  in al, dx
  movzx eax, al
  add [rip + rx_sum], rax
  out dx, al
  jmp 2b
3: mov al, 0x20
  out 0x20, al
  pop rdx
  pop rax
  iretq

# rax = handler, ecx = vector, rdi = idt
set_gate:
  mov rdx, rcx
  shl rdx, 4
  add rdx, rdi
  mov [rdx], ax
  mov word ptr [rdx + 2], 0x10
  mov word ptr [rdx + 4], 0x8e00
  mov rsi, rax
  shr rsi, 16
  mov [rdx + 6], si
  shr rax, 32
  mov [rdx + 8], eax
  mov dword ptr [rdx + 12], 0
  ret

.balign 16
idtr: .word 0x3ff
  .quad 0
.balign 8
ticks: .quad 0
cmos_sum: .quad 0
rx_sum: .quad 0
.balign 16
idt: .fill 512, 8, 0
stack: .fill 1024, 1, 0
stack_top:
