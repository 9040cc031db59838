# F/D and their compressed forms: the riscv64 disassembler golden (objdump.sh assembles it with llvm-mc)
.text
fp_insns:
  fadd.s fa0, fa1, fs2
  fadd.s fa0, fa1, fs2, rne
  fadd.s fa0, fa1, fs2, rtz
  fadd.s fa0, fa1, fs2, rdn
  fadd.s fa0, fa1, fs2, rup
  fadd.s fa0, fa1, fs2, rmm
  fsub.s fa0, fa1, fs2
  fsub.s fa0, fa1, fs2, rne
  fsub.s fa0, fa1, fs2, rtz
  fsub.s fa0, fa1, fs2, rdn
  fsub.s fa0, fa1, fs2, rup
  fsub.s fa0, fa1, fs2, rmm
  fmul.s fa0, fa1, fs2
  fmul.s fa0, fa1, fs2, rne
  fmul.s fa0, fa1, fs2, rtz
  fmul.s fa0, fa1, fs2, rdn
  fmul.s fa0, fa1, fs2, rup
  fmul.s fa0, fa1, fs2, rmm
  fdiv.s fa0, fa1, fs2
  fdiv.s fa0, fa1, fs2, rne
  fdiv.s fa0, fa1, fs2, rtz
  fdiv.s fa0, fa1, fs2, rdn
  fdiv.s fa0, fa1, fs2, rup
  fdiv.s fa0, fa1, fs2, rmm
  fmadd.s ft0, fa1, fa2, ft11
  fmadd.s ft0, fa1, fa2, ft11, rtz
  fmadd.s ft0, fa1, fa2, ft11, rmm
  fmsub.s ft0, fa1, fa2, ft11
  fmsub.s ft0, fa1, fa2, ft11, rtz
  fmsub.s ft0, fa1, fa2, ft11, rmm
  fnmsub.s ft0, fa1, fa2, ft11
  fnmsub.s ft0, fa1, fa2, ft11, rtz
  fnmsub.s ft0, fa1, fa2, ft11, rmm
  fnmadd.s ft0, fa1, fa2, ft11
  fnmadd.s ft0, fa1, fa2, ft11, rtz
  fnmadd.s ft0, fa1, fa2, ft11, rmm
  fsqrt.s fa0, fa1
  fsqrt.s fa0, fa1, rup
  fsgnj.s fa0, fa1, fa2
  fsgnj.s ft3, ft3, ft3
  fsgnjn.s fa0, fa1, fa2
  fsgnjn.s ft3, ft3, ft3
  fsgnjx.s fa0, fa1, fa2
  fsgnjx.s ft3, ft3, ft3
  fmin.s fa0, fa1, fa2
  fmin.s ft3, ft3, ft3
  fmax.s fa0, fa1, fa2
  fmax.s ft3, ft3, ft3
  feq.s a0, fa1, fa2
  flt.s a0, fa1, fa2
  fle.s a0, fa1, fa2
  fclass.s a0, fs0
  fcvt.w.s t1, fa1
  fcvt.w.s t1, fa1, rtz
  fcvt.w.s t1, fa1, rne
  fcvt.s.w fa1, a2
  fcvt.s.w fa1, a2, rdn
  fcvt.wu.s t1, fa1
  fcvt.wu.s t1, fa1, rtz
  fcvt.wu.s t1, fa1, rne
  fcvt.s.wu fa1, a2
  fcvt.s.wu fa1, a2, rdn
  fcvt.l.s t1, fa1
  fcvt.l.s t1, fa1, rtz
  fcvt.l.s t1, fa1, rne
  fcvt.s.l fa1, a2
  fcvt.s.l fa1, a2, rdn
  fcvt.lu.s t1, fa1
  fcvt.lu.s t1, fa1, rtz
  fcvt.lu.s t1, fa1, rne
  fcvt.s.lu fa1, a2
  fcvt.s.lu fa1, a2, rdn
  fadd.d fa0, fa1, fs2
  fadd.d fa0, fa1, fs2, rne
  fadd.d fa0, fa1, fs2, rtz
  fadd.d fa0, fa1, fs2, rdn
  fadd.d fa0, fa1, fs2, rup
  fadd.d fa0, fa1, fs2, rmm
  fsub.d fa0, fa1, fs2
  fsub.d fa0, fa1, fs2, rne
  fsub.d fa0, fa1, fs2, rtz
  fsub.d fa0, fa1, fs2, rdn
  fsub.d fa0, fa1, fs2, rup
  fsub.d fa0, fa1, fs2, rmm
  fmul.d fa0, fa1, fs2
  fmul.d fa0, fa1, fs2, rne
  fmul.d fa0, fa1, fs2, rtz
  fmul.d fa0, fa1, fs2, rdn
  fmul.d fa0, fa1, fs2, rup
  fmul.d fa0, fa1, fs2, rmm
  fdiv.d fa0, fa1, fs2
  fdiv.d fa0, fa1, fs2, rne
  fdiv.d fa0, fa1, fs2, rtz
  fdiv.d fa0, fa1, fs2, rdn
  fdiv.d fa0, fa1, fs2, rup
  fdiv.d fa0, fa1, fs2, rmm
  fmadd.d ft0, fa1, fa2, ft11
  fmadd.d ft0, fa1, fa2, ft11, rtz
  fmadd.d ft0, fa1, fa2, ft11, rmm
  fmsub.d ft0, fa1, fa2, ft11
  fmsub.d ft0, fa1, fa2, ft11, rtz
  fmsub.d ft0, fa1, fa2, ft11, rmm
  fnmsub.d ft0, fa1, fa2, ft11
  fnmsub.d ft0, fa1, fa2, ft11, rtz
  fnmsub.d ft0, fa1, fa2, ft11, rmm
  fnmadd.d ft0, fa1, fa2, ft11
  fnmadd.d ft0, fa1, fa2, ft11, rtz
  fnmadd.d ft0, fa1, fa2, ft11, rmm
  fsqrt.d fa0, fa1
  fsqrt.d fa0, fa1, rup
  fsgnj.d fa0, fa1, fa2
  fsgnj.d ft3, ft3, ft3
  fsgnjn.d fa0, fa1, fa2
  fsgnjn.d ft3, ft3, ft3
  fsgnjx.d fa0, fa1, fa2
  fsgnjx.d ft3, ft3, ft3
  fmin.d fa0, fa1, fa2
  fmin.d ft3, ft3, ft3
  fmax.d fa0, fa1, fa2
  fmax.d ft3, ft3, ft3
  feq.d a0, fa1, fa2
  flt.d a0, fa1, fa2
  fle.d a0, fa1, fa2
  fclass.d a0, fs0
  fcvt.w.d t1, fa1
  fcvt.w.d t1, fa1, rtz
  fcvt.w.d t1, fa1, rne
  fcvt.d.w fa1, a2
  fcvt.wu.d t1, fa1
  fcvt.wu.d t1, fa1, rtz
  fcvt.wu.d t1, fa1, rne
  fcvt.d.wu fa1, a2
  fcvt.l.d t1, fa1
  fcvt.l.d t1, fa1, rtz
  fcvt.l.d t1, fa1, rne
  fcvt.d.l fa1, a2
  fcvt.d.l fa1, a2, rdn
  fcvt.lu.d t1, fa1
  fcvt.lu.d t1, fa1, rtz
  fcvt.lu.d t1, fa1, rne
  fcvt.d.lu fa1, a2
  fcvt.d.lu fa1, a2, rdn
  fcvt.s.d fa0, fa1
  fcvt.s.d fa0, fa1, rtz
  fcvt.d.s fa0, fa1
  fmv.x.w a0, fa0
  fmv.x.d a0, fa0
  fmv.w.x fa0, a0
  fmv.d.x ft5, zero
  flw fa0, -8(sp)
  fsw fa0, 2040(a0)
  fld fs0, 0(a5)
  fsd ft9, -2048(t0)
  c.fld fs0, 8(a0)
  c.fsd fa5, 248(a5)
  c.fldsp fa0, 24(sp)
  c.fldsp ft0, 504(sp)
  c.fsdsp fs1, 16(sp)
  frflags a0
  fsflags a0
  fsflags a0, a1
  frrm a0
  fsrm a0
  fsrm t0, t1
  frcsr a0
  fscsr a0
  fscsr a2, a3
  fsflagsi 3
  fsrmi 2
  fsflagsi a0, 1
  csrsi frm, 1
  csrs fflags, a0
  csrc fcsr, a1
  csrr a0, fflags
