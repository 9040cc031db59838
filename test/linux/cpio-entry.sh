# Sourced by the scripts that write initramfs archives without a cpio
# program (make-initramfs.sh, kbuild/modules-cpio.sh, agent/build-agent.sh).
# cpio_entry NAME MODE [FILE] [MAJOR MINOR]: one newc record appended to
# "$cpio_out" with inode "$cpio_ino" (then incremented): the header (owner
# 0:0, mtime 0, nlink 1), the NUL-terminated name padded to 4 bytes, the
# file's bytes padded to 4; MAJOR MINOR are a device node's rdev.
cpio_entry() {
  local name=$1 mode=$2 file=${3:-} maj=${4:-0} min=${5:-0} size=0 n
  [ -n "$file" ] && size=$(stat -L -c %s "$file")
  n=$(( ${#name} + 1 ))
  # magic ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor namesize check
  printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
    "$cpio_ino" "$mode" 0 0 1 0 "$size" 0 0 "$maj" "$min" "$n" 0 >> "$cpio_out"
  printf '%s\0' "$name" >> "$cpio_out"
  head -c $(( (4 - (110 + n) % 4) % 4 )) /dev/zero >> "$cpio_out"
  if [ -n "$file" ]; then
    cat "$file" >> "$cpio_out"
    head -c $(( (4 - size % 4) % 4 )) /dev/zero >> "$cpio_out"
  fi
  cpio_ino=$((cpio_ino + 1))
}
