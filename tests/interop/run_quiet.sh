#!/bin/sh
# run_quiet.sh LOG COMMAND [ARGS...] - runs COMMAND with its output in LOG; prints LOG when it fails.
log=$1
shift
if "$@" >"$log" 2>&1; then
  exit 0
else
  rc=$?
  cat "$log"
  echo "run_quiet.sh: '$*' failed with exit status $rc (log: $log)" >&2
  exit $rc
fi
