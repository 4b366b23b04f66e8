#!/bin/sh
# Re-record the lsblk/blkid and /proc outputs used by the safety and cold unit tests.
# Run as root from this directory: sh record-block.sh  (needs losetup, partx, mkfs.ext4).
set -eu
here=$(pwd)
work=$(mktemp -d /tmp/kvgate-block-record.XXXXXX)
img="$work/disk.img"
truncate -s 64M "$img"
# one MBR partition (type 0x83) from sector 2048 to the end
python3 -c "
import struct
mbr = bytearray(512)
mbr[446:462] = struct.pack('<B3sB3sII', 0, b'\x00\x02\x00', 0x83, b'\xff\xff\xff', 2048, 64 * 2048 - 2048)
mbr[510:512] = b'\x55\xaa'
open('$img', 'r+b').write(mbr)
"
loop=$(losetup --find --show "$img")
partx -a "$loop"
mkfs.ext4 -q "${loop}p1"
mkdir -p "$work/mnt"
mount "${loop}p1" "$work/mnt"
lsblk -J -p -o NAME,MOUNTPOINTS "$loop" >"$here/lsblk-partition-mounted.json"
blkid -p "$loop" >"$here/blkid-disk.txt" || true
blkid -p "${loop}p1" >"$here/blkid-partition.txt" || true
umount "$work/mnt"
partx -d "$loop"
losetup -d "$loop"
rm -rf "$work"
cat /proc/diskstats >"$here/proc-diskstats.txt"
cat /proc/meminfo >"$here/proc-meminfo.txt"
