#!/usr/bin/env bash
# Run one gate for CI and copy its report, PDF and JUnit into ci-artifacts/<gate>/.
# The exit code is kvgate's (README: 0 pass, 1 fail, 2 invalid, 3 lab error, 4 usage, 5 interrupted,
# 6 regression with --fail-on-regression): CI fails on anything but 0.
set -uo pipefail
gate=$1
cd "$(dirname "$0")/.."
if [ "$gate" = preflight ]; then
  .venv/bin/kvgate preflight --inventory "$KVGATE_INVENTORY" --results "$KVGATE_RESULTS"
else
  # shellcheck disable=SC2086  # KVGATE_ARGS is a list of options
  .venv/bin/kvgate run "$gate" --inventory "$KVGATE_INVENTORY" --results "$KVGATE_RESULTS" $KVGATE_ARGS
fi
code=$?
run=$(ls -td "$KVGATE_RESULTS"/*/"$gate"-* 2>/dev/null | head -n 1)
mkdir -p "ci-artifacts/$gate"
if [ -n "$run" ]; then
  cp "$run"/report.html "$run"/junit.xml "ci-artifacts/$gate/" 2>/dev/null
  cp "$run"/report.pdf "ci-artifacts/$gate/" 2>/dev/null
  echo "$run" > "ci-artifacts/$gate/run-directory.txt"
fi
if [ "$gate" != preflight ]; then
  .venv/bin/kvgate history --results "$KVGATE_RESULTS" --gate "$gate" > "ci-artifacts/$gate/history.txt" 2>&1 || true
fi
exit $code
