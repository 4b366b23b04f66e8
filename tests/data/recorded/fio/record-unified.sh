#!/bin/sh
# Record fio 3.33 json+ outputs with unified_rw_reporting (tests/unit/test_fio_parse.py).
# Run from this directory: sh record-unified.sh  (takes ~8 s; no root needed).
set -eu
here=$(pwd)
work=$(mktemp -d /tmp/kvgate-fio-record.XXXXXX)
trap 'rm -rf "$work"' EXIT

common="--ioengine=libaio --direct=1 --time_based=1 --runtime=2 --ramp_time=1 --size=16m"

# 1. unified_rw_reporting=1: reads and writes merged into one "mixed" direction
fio $common --directory="$work" --name=unified --rw=randrw --bs=4k --iodepth=4 \
    --unified_rw_reporting=1 --output-format=json+ --output="$here/unified_mixed.json" \
    2>"$here/unified_mixed.stderr"

# 2. unified_rw_reporting=both: read, write and mixed side by side
fio $common --directory="$work" --name=unifiedboth --rw=randrw --bs=4k --iodepth=4 \
    --unified_rw_reporting=both --output-format=json+ --output="$here/unified_both.json" \
    2>"$here/unified_both.stderr"
