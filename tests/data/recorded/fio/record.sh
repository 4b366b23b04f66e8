#!/bin/sh
# Re-record the fio 3.33 json+ outputs used by tests/unit/test_fio_parse.py.
# Run as root from this directory: sh record.sh  (takes ~45 s; needs losetup).
set -eu
here=$(pwd)
work=$(mktemp -d /tmp/kvgate-fio-record.XXXXXX)
trap 'rm -rf "$work"' EXIT

common="--ioengine=libaio --direct=1 --time_based=1 --runtime=2 --ramp_time=1 --size=16m"

# 1. single job: 4 KiB random read, iodepth 4
fio $common --directory="$work" --name=single --rw=randread --bs=4k --iodepth=4 \
    --output-format=json+ --output="$here/single.json" 2>"$here/single.stderr"

# 2. one 1 MiB sequential write job
fio $common --directory="$work" --name=seqwrite --rw=write --bs=1m --iodepth=8 \
    --output-format=json+ --output="$here/seqwrite.json" 2>"$here/seqwrite.stderr"

# 3. numjobs=4 without group_reporting: four entries in "jobs"
fio $common --directory="$work" --name=multi --rw=randread --bs=4k --iodepth=2 --numjobs=4 \
    --output-format=json+ --output="$here/multijob.json" 2>"$here/multijob.stderr"

# 4. numjobs=4 with group_reporting: one merged entry
fio $common --directory="$work" --name=grouped --rw=randread --bs=4k --iodepth=2 --numjobs=4 \
    --group_reporting=1 --output-format=json+ --output="$here/group_reporting.json" \
    2>"$here/group_reporting.stderr"

# 5. error text before the JSON: O_DIRECT 512 B reads on a 4 KiB-sector loop device
#    fail with EINVAL; with --thread fio writes the error lines into the output file.
truncate -s 16M "$work/lo.img"
loop=$(losetup -b 4096 --find --show "$work/lo.img")
fio --thread --name=ioerr --filename="$loop" --rw=read --bs=512 --direct=1 --ioengine=libaio \
    --size=1m --time_based=1 --runtime=1 --output-format=json+ \
    --output="$here/error_prefix.json" 2>"$here/error_prefix.stderr" || echo "fio exited $? (expected)"
losetup -d "$loop"

# 6. client/server: two fio servers on 127.0.0.1, one client run against both
mkdir -p "$work/srv"
fio --server=ip:127.0.0.1,18765 --daemonize="$work/s1.pid"
fio --server=ip:127.0.0.1,18766 --daemonize="$work/s2.pid"
sleep 0.5
fio --name=cs --directory="$work/srv" --size=16m --rw=read --bs=4k --create_only=1 >/dev/null
cat >"$work/cs.fio" <<JOB
[global]
ioengine=libaio
direct=1
time_based=1
runtime=2
ramp_time=1
size=16m
[cs]
rw=randread
bs=4k
iodepth=4
directory=$work/srv
JOB
fio --output-format=json+ --output="$here/clients.json" \
    --client=ip:127.0.0.1,18765 "$work/cs.fio" --client=ip:127.0.0.1,18766 "$work/cs.fio" \
    2>"$here/clients.stderr"
kill "$(cat "$work/s1.pid")" "$(cat "$work/s2.pid")"

# 7. a sample beyond fio's histogram ceiling: stop the job process for 18 s mid-run, so
#    in-flight I/Os complete after > 17.05 s and land in the last bucket (17112760320 ns).
fio --ioengine=libaio --direct=1 --time_based=1 --runtime=22 --directory="$work" --size=16m \
    --name=ceiling --rw=randread --bs=4k --iodepth=4 \
    --output-format=json+ --output="$here/ceiling.json" 2>"$here/ceiling.stderr" &
sleep 2
worker=$(pgrep -f -n 'fio .*--name=ceiling')
for p in $(pgrep -P "$worker"); do worker=$p; done
kill -STOP "$worker"; sleep 18; kill -CONT "$worker"
wait
