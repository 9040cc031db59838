/**
 * Branches: b, bl, b.cond, cbz/cbnz, tbz/tbnz (pc-relative, targets
 * resolved at decode time) and br, blr, ret.
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { f, sf as sx, rZ, gz, COND, target } from '../fmt';

function b(c: A64Cpu, i: A64Insn): void { c.pc = i.target; }
function bl(c: A64Cpu, i: A64Insn): void { c.setAddr(30, i.next); c.pc = i.target; }
function bcond(c: A64Cpu, i: A64Insn): void { if (c.cond(i.cond)) c.pc = i.target; }
function cbz(c: A64Cpu, i: A64Insn): void { if ((c.lo[i.n] | (i.sf ? c.hi[i.n] : 0)) === 0) c.pc = i.target; }
function cbnz(c: A64Cpu, i: A64Insn): void { if ((c.lo[i.n] | (i.sf ? c.hi[i.n] : 0)) !== 0) c.pc = i.target; }
function tbz(c: A64Cpu, i: A64Insn): void { if ((((i.imm < 32 ? c.lo[i.n] : c.hi[i.n]) >>> (i.imm & 31)) & 1) === 0) c.pc = i.target; }
function tbnz(c: A64Cpu, i: A64Insn): void { if ((((i.imm < 32 ? c.lo[i.n] : c.hi[i.n]) >>> (i.imm & 31)) & 1) !== 0) c.pc = i.target; }
function br(c: A64Cpu, i: A64Insn): void { c.pc = c.addrOf(i.n, 'read'); }
function blr(c: A64Cpu, i: A64Insn): void { const t = c.addrOf(i.n, 'read'); c.setAddr(30, i.next); c.pc = t; }

const uncond: Row = {
  name: 'b/bl', mask: 0x7c000000, match: 0x14000000, pcRel: true,
  decode(w, i) {
    i.op = f(w, 31, 1); i.target = i.addr + sx(w, 0, 26) * 4;
    i.exec = i.op ? bl : b;
    return true;
  },
  fmt: i => [i.op ? 'bl' : 'b', target(i.target)],
};
const condBranch: Row = {
  name: 'b.cond', mask: 0xff000010, match: 0x54000000, pcRel: true, flow: 'condJump',
  decode(w, i) { i.cond = f(w, 0, 4); i.target = i.addr + sx(w, 5, 19) * 4; i.exec = i.cond >= 14 ? b : bcond; return true; },
  fmt: i => [`b.${COND[i.cond]}`, target(i.target)],
};
const cmpBranch: Row = {
  name: 'cbz/cbnz', mask: 0x7e000000, match: 0x34000000, pcRel: true, flow: 'condJump',
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 24, 1); i.rd = f(w, 0, 5); i.n = rZ(i.rd);
    i.target = i.addr + sx(w, 5, 19) * 4; i.exec = i.op ? cbnz : cbz; return true;
  },
  fmt: i => [i.op ? 'cbnz' : 'cbz', `${gz(i.rd, i.sf)}, ${target(i.target)}`],
};
const testBranch: Row = {
  name: 'tbz/tbnz', mask: 0x7e000000, match: 0x36000000, pcRel: true, flow: 'condJump',
  decode(w, i) {
    i.imm = f(w, 31, 1) * 32 + f(w, 19, 5); i.op = f(w, 24, 1); i.rd = f(w, 0, 5); i.n = rZ(i.rd);
    i.target = i.addr + sx(w, 5, 14) * 4; i.exec = i.op ? tbnz : tbz; return true;
  },
  fmt: i => [i.op ? 'tbnz' : 'tbz', `${gz(i.rd, i.imm >= 32 ? 1 : 0)}, #${i.imm}, ${target(i.target)}`],
};
const brRow: Row = {
  name: 'br', mask: 0xfffffc1f, match: 0xd61f0000, flow: 'indirectJump',
  decode(w, i) { i.rn = f(w, 5, 5); i.n = rZ(i.rn); i.exec = br; return true; },
  fmt: i => ['br', gz(i.rn, 1)],
};
const blrRow: Row = {
  name: 'blr', mask: 0xfffffc1f, match: 0xd63f0000, flow: 'indirectCall',
  decode(w, i) { i.rn = f(w, 5, 5); i.n = rZ(i.rn); i.exec = blr; return true; },
  fmt: i => ['blr', gz(i.rn, 1)],
};
const retRow: Row = {
  name: 'ret', mask: 0xfffffc1f, match: 0xd65f0000, flow: 'ret',
  decode(w, i) { i.rn = f(w, 5, 5); i.n = rZ(i.rn); i.exec = br; return true; },
  fmt: i => ['ret', i.rn === 30 ? '' : gz(i.rn, 1)],
};

export const BRANCH_ROWS: readonly Row[] = [uncond, condBranch, cmpBranch, testBranch, brRow, blrRow, retRow];
