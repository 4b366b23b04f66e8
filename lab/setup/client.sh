#!/bin/sh
# The client: connects both NVMe/TCP paths to the array (native multipath: one head per
# namespace, two paths each), puts a file system on namespace 1's head and mounts it as the
# candidate volume, and mounts the array's NFS export as the baseline.
# Env: NQN, PORT1_ADDR, PORT2_ADDR, NFS_SERVER.
set -eu
[ -s /etc/nvme/hostnqn.lab ] || { nvme gen-hostnqn > /etc/nvme/hostnqn.lab; cp /etc/nvme/hostnqn.lab /etc/nvme/hostnqn; uuidgen > /etc/nvme/hostid; }
modprobe nvme-tcp
for addr in "$PORT1_ADDR" "$PORT2_ADDR"; do
  nvme list-subsys 2>/dev/null | grep -q "traddr=$addr " ||
    nvme connect -t tcp -a "$addr" -s 4420 -n "$NQN" --ctrl-loss-tmo=3600 --reconnect-delay=2 \
      --keep-alive-tmo=30  # TCG guests on a busy host can miss the default 5 s keep-alive
done
head=""
for i in $(seq 50); do
  for b in /sys/block/nvme*n1; do
    case ${b##*/} in *c*) continue ;; esac  # nvmeXcYnZ is a path, not the head
    [ -e "$b" ] && grep -q "$NQN" "$b/device/subsysnqn" 2>/dev/null && head=/dev/${b##*/}
  done
  [ -n "$head" ] && break; sleep 0.2
done
[ -n "$head" ] || { echo "no multipath head for $NQN" >&2; exit 1; }
blkid "$head" >/dev/null || mkfs.ext4 -q -L kvgate-array "$head"
mkdir -p /mnt/array /mnt/nfs
mountpoint -q /mnt/array || mount -o noatime "$head" /mnt/array
mkdir -p /mnt/array/kvgate
mountpoint -q /mnt/nfs || mount -t nfs4 -o vers=4.2 "$NFS_SERVER:/srv/nfs" /mnt/nfs
mkdir -p /mnt/nfs/kvgate
echo "$head"
