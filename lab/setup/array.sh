#!/bin/sh
# The array: two emulated NVMe drives exported with nvmet over TCP on two ports (one per lab
# link), each namespace in its own ANA group, optimized on one port and non-optimized on the
# other (as a dual-controller array owns each namespace on one controller); and a kernel NFS
# server exporting a third drive. Env: NQN, PORT1_ADDR, PORT2_ADDR, NFS_CLIENTS.
# Works on any Debian host with these drives (a spare server as a rehearsal lab).
set -eu
drive() { readlink -f "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_$1"; }
modprobe nvmet; modprobe nvmet-tcp
cfg=/sys/kernel/config/nvmet
sub=$cfg/subsystems/$NQN
mkdir -p "$sub"
echo 1 > "$sub/attr_allow_any_host"
echo KVGLAB-ARRAY > "$sub/attr_model"
ns=1
for serial in KVGLAB-NS1 KVGLAB-NS2; do
  mkdir -p "$sub/namespaces/$ns"
  [ "$(cat "$sub/namespaces/$ns/enable")" = 1 ] && { ns=$((ns + 1)); continue; }  # set up already
  echo "$(drive $serial)" > "$sub/namespaces/$ns/device_path"
  echo $ns > "$sub/namespaces/$ns/ana_grpid"
  echo 1 > "$sub/namespaces/$ns/enable"
  ns=$((ns + 1))
done
port=1
for addr in "$PORT1_ADDR" "$PORT2_ADDR"; do
  p=$cfg/ports/$port
  mkdir -p "$p" "$p/ana_groups/2"
  if [ ! -e "$p/subsystems/$NQN" ]; then  # an enabled port's address cannot change
    echo tcp > "$p/addr_trtype"; echo ipv4 > "$p/addr_adrfam"
    echo "$addr" > "$p/addr_traddr"; echo 4420 > "$p/addr_trsvcid"
  fi
  # group 1 (namespace 1) is optimized on port 1, group 2 (namespace 2) on port 2
  if [ $port = 1 ]; then a=optimized; b=non-optimized; else a=non-optimized; b=optimized; fi
  echo $a > "$p/ana_groups/1/ana_state"; echo $b > "$p/ana_groups/2/ana_state"
  [ -e "$p/subsystems/$NQN" ] || ln -s "$sub" "$p/subsystems/$NQN"
  port=$((port + 1))
done

nfs=$(drive KVGLAB-NFS)
blkid "$nfs" >/dev/null || mkfs.ext4 -q -L kvgate-nfs "$nfs"
mkdir -p /srv/nfs
mountpoint -q /srv/nfs || mount -o noatime "$nfs" /srv/nfs
mkdir -p /srv/nfs/kvgate
mkdir -p /etc/exports.d
echo "/srv/nfs $NFS_CLIENTS(rw,sync,no_subtree_check,no_root_squash)" > /etc/exports.d/kvgate-lab.exports
systemctl restart nfs-server
exportfs -ra
