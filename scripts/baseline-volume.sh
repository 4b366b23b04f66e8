#!/bin/sh
# The demo's baseline volume (inventory/local.yaml `baseline`, G3's R2/R3 baseline_volume): a second,
# slower local volume, as the seed's local NVMe was slower than its array. Made of real parts:
#   - an ext4 file system on a loop device over a sparse file beside it (losetup --direct-io=on, so the
#     loop reads its backing file without a second page cache and drop_caches makes it cold);
#   - its reads throttled by the kernel's block throttle, cgroup v1 blkio.throttle.read_bps_device on
#     the loop device in the root blkio cgroup (every process on this machine).
# Idempotent: an existing mount is kept and its throttle set again. Needs root (or sudo -n).
# Usage: scripts/baseline-volume.sh DIR [READ_BYTES_PER_S]     (default 20 MB/s; DIR: an absolute path)
set -eu
dir=${1:?usage: $0 DIR [READ_BYTES_PER_S]}
bps=${2:-20000000}
image="$dir.img"
throttle=/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

if [ ! -e "$throttle" ]; then
    echo "$0: no cgroup v1 blkio throttle at $throttle: cannot make $dir slower" >&2
    exit 1
fi
mkdir -p "$dir"
if ! mountpoint -q "$dir"; then
    [ -e "$image" ] || truncate -s 4G "$image"
    loop=$(run losetup --find --show --direct-io=on "$image")
    blkid "$loop" >/dev/null 2>&1 || run mkfs.ext4 -q -F "$loop"
    run mount "$loop" "$dir"
fi
loop=$(findmnt -n -o SOURCE --target "$dir")
devno=$(cat "/sys/class/block/$(basename "$loop")/dev")
echo "$devno $bps" | run tee "$throttle" >/dev/null
echo "$dir: ext4 on $loop ($devno, backed by $image), reads throttled to $bps B/s"
