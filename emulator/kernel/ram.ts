/**
 * How much memory the emulated machine has, and what that bounds.
 *
 * MACHINE_RAM is the RAM sysinfo(2) reports (totalram; no swap). It bounds:
 * a single request of committed user memory (private writable mappings,
 * anonymous shared ones, the heap: -ENOMEM beyond it, as Linux's default
 * overcommit heuristic refuses a request of more pages than RAM + swap);
 * a file's pages held in memory (a larger file from --rootfs is read in
 * pieces, and is -ENOMEM to map or execute; a file grown beyond it is
 * -EFBIG); and an initramfs's unpacked size (refused beyond it, as the
 * archive must fit in RAM to be unpacked into the page cache).
 */
export const MACHINE_RAM = 1 << 30;
/** The largest area the emulator can hold in one piece (a typed array's limit): larger ones are -ENOMEM too. */
export const MAX_AREA = 2 ** 32;
