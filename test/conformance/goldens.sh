# Shared by build.sh, build-aarch64.sh and build-riscv64.sh (sourced, not run):
# running an ELF under qemu-user into a golden, and --verify of committed goldens.
#   QEMU   the qemu-user command line ("qemu-x86_64", "qemu-aarch64 -cpu max", ...)
#   BIN    folder of the ELFs, GOLD folder of the goldens, ARCH for messages

run_one() { # elf base: stdout -> base.out, exit status -> base.code
  local code=0
  $QEMU "$1" > "$2.out" || code=$?
  echo "$code" > "$2.code"
}

verify_goldens() { # exits 0 when every committed ELF still prints its golden under $QEMU
  local bad=0 g name code out
  for g in "$GOLD"/*.out; do
    name=$(basename "$g" .out)
    code=0
    out=$(mktemp)
    $QEMU "$BIN/$name.elf" > "$out" || code=$?
    if ! cmp -s "$out" "$g" || [ "$code" != "$(cat "$GOLD/$name.code")" ]; then
      echo "MISMATCH $name"; bad=1
    fi
    rm -f "$out"
  done
  [ $bad = 0 ] && echo "all $ARCH goldens match ${QEMU%% *}"
  exit $bad
}
