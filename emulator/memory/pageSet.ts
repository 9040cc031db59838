/**
 * A set of 4 KiB page numbers with a constant-time test for the low ones:
 * a byte per page below 2^20 (the first 4 GiB: a full-system PC's physical
 * RAM), grown on demand; any other page (an emulated kernel's upper-half
 * addresses are negative) in a Set. Memory.codePages is one: every store
 * the interpreter makes asks it whether the page holds decoded code.
 */
const DENSE_LIMIT = 1 << 20;

export class PageSet {
  private bytes = new Uint8Array(0);
  private readonly sparse = new Set<number>();
  private count = 0;

  get size(): number { return this.count; }

  has(p: number): boolean {
    return p >= 0 && p < this.bytes.length ? this.bytes[p] !== 0 : this.sparse.has(p);
  }

  add(p: number): this {
    if (p >= 0 && p < DENSE_LIMIT && Number.isInteger(p)) {
      if (p >= this.bytes.length) {
        let n = Math.max(this.bytes.length * 2, 4096);
        while (n <= p) n *= 2;
        const b = new Uint8Array(Math.min(n, DENSE_LIMIT));
        b.set(this.bytes);
        this.bytes = b;
      }
      if (this.bytes[p] === 0) { this.bytes[p] = 1; this.count++; }
    } else if (!this.sparse.has(p)) { this.sparse.add(p); this.count++; }
    return this;
  }

  delete(p: number): boolean {
    if (p >= 0 && p < this.bytes.length) {
      if (this.bytes[p] === 0) return false;
      this.bytes[p] = 0; this.count--;
      return true;
    }
    if (!this.sparse.delete(p)) return false;
    this.count--;
    return true;
  }
}
