#!/usr/bin/env bash
# Sourced by the setup scripts: refuses an install that the disk cannot hold, before pip starts, instead of
# letting pip stop half way with "No space left on device". Usage: check_disk FOLDER GIB WHAT
check_disk() {
  local folder="$1" need_gib="$2" what="$3" tmp="${TMPDIR:-/tmp}" free_kib tmp_kib
  mkdir -p "$folder" 2>/dev/null || true
  free_kib="$(df -Pk "$folder" 2>/dev/null | awk 'NR == 2 {print $4}')"
  tmp_kib="$(df -Pk "$tmp" 2>/dev/null | awk 'NR == 2 {print $4}')"
  [ -n "$free_kib" ] || return 0  # df cannot tell: let pip try
  for pair in "$folder:$free_kib" "$tmp:$tmp_kib"; do
    local where="${pair%:*}" kib="${pair##*:}"
    [ -n "$kib" ] || continue
    if [ "$kib" -lt $((need_gib * 1024 * 1024)) ]; then
      echo "$what needs about ${need_gib} GiB free in $where, which has $((kib / 1024 / 1024)) GiB:" \
           "free some space there (old virtual environments, /tmp leftovers) or point TMPDIR elsewhere, then rerun." >&2
      return 1
    fi
  done
}
