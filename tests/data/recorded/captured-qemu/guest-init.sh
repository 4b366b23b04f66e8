#!/bin/sh
# kvgate issue 14 (h-rec3): a real Linux 6.1 NVMe-oF target (nvmet) and host in one QEMU guest,
# Debian 12's nvme-cli 2.3 / libnvme 1.3 reading it. Every command is echoed to out/commands.log.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
for m in $(cat /mods/order); do insmod /mods/$m.ko || echo "insmod $m failed"; done
mount -t configfs none /sys/kernel/config
ip link set lo up
O=/out
run() { echo "\$ $*" >> $O/commands.log; }
cap() { f=$1; shift; run "$* > $f"; "$@" > $O/$f 2> $O/$f.stderr; echo "rc=$?" >> $O/commands.log; }
T=/sys/kernel/config/nvmet
target() {  # nqn image
  S=$T/subsystems/$1; mkdir $S; echo 1 > $S/attr_allow_any_host
  dd if=/dev/zero of=/tmp/$2 bs=1M count=0 seek=1024 2>/dev/null
  mkdir $S/namespaces/1; echo -n /tmp/$2 > $S/namespaces/1/device_path
  echo 1 > $S/namespaces/1/buffered_io; echo 1 > $S/namespaces/1/enable  # tmpfs has no O_DIRECT
}
port() {  # id trtype addr svcid nqn ana_state
  P=$T/ports/$1; mkdir $P; echo $2 > $P/addr_trtype; echo ipv4 > $P/addr_adrfam
  echo $3 > $P/addr_traddr; echo $4 > $P/addr_trsvcid
  ln -s $T/subsystems/$5 $P/subsystems/$5
  echo $6 > $P/ana_groups/1/ana_state
}
# NVMe/TCP on loopback: one subsystem, three ports in ANA group 1 with three states
N1=nqn.2026-12.io.kvgate.h-rec3:tcp-array
target $N1 tcp.img
port 1 tcp 127.0.0.1 4420 $N1 optimized
port 2 tcp 127.0.0.1 4421 $N1 non-optimized
port 3 tcp 127.0.0.1 4422 $N1 inaccessible
# NVMe/RDMA over Soft-RoCE (rdma_rxe) on a veth pair: two ports, optimized and non-optimized
/usr/sbin/ip link add veth0 type veth peer name veth1
/usr/sbin/ip addr add 10.30.0.11/24 dev veth0; /usr/sbin/ip addr add 10.30.0.12/24 dev veth1
/usr/sbin/ip link set veth0 up; /usr/sbin/ip link set veth1 up
rdma link add rxe0 type rxe netdev veth0; rdma link add rxe1 type rxe netdev veth1
cap ip-addr.txt /usr/sbin/ip -br addr
cap rdma-link.txt rdma link show
N2=nqn.2026-12.io.kvgate.h-rec3:rdma-array
target $N2 rdma.img
port 4 rdma 10.30.0.12 4420 $N2 optimized
port 5 rdma 10.30.0.12 4421 $N2 non-optimized
mkdir -p /etc/nvme; echo "nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)" > /etc/nvme/hostnqn; cat /proc/sys/kernel/random/uuid > /etc/nvme/hostid
for s in 4420 4421 4422; do cap connect-tcp-$s.txt nvme connect -t tcp -a 127.0.0.1 -s $s -n $N1; done
for s in 4420 4421; do cap connect-rdma-$s.txt nvme connect -t rdma -a 10.30.0.12 -s $s -n $N2; done
sleep 3
for v in 2.3 2.13 1.12; do
  case $v in 2.3) NV=nvme;; 2.13) NV=/nvme213;; 1.12) NV=/nvme112;; esac
  cap $v-version.txt $NV version
  cap $v-list-subsys.json $NV list-subsys -o json
  for b in /sys/block/nvme*n*; do n=${b##*/}; case $n in *c*) continue;; esac
    cap $v-list-subsys-$n.json $NV list-subsys /dev/$n -o json; done
  cap $v-list.json $NV list -o json
  cap $v-list-v.json $NV list -v -o json
  for c in /sys/class/nvme/nvme*; do n=${c##*/}; [ "$(cat $c/transport)" = pcie ] || continue
    cap $v-smart-log-$n.json $NV smart-log /dev/$n -o json
    cap $v-smart-log-v-$n.json $NV smart-log /dev/$n -v -o json; done
done
cap nvmeof-probe.txt sh /nvmeof-probe.sh
cap roce-probe.txt sh /roce-probe.sh
cap cm-probe.txt sh /cm-probe.sh
# ibv_devinfo of the Soft-RoCE ports at the veth MTU of 1500 and then 9000 (rxe follows the netdev MTU)
cap ibv_devinfo-mtu1500.txt ibv_devinfo
/usr/sbin/ip link set veth0 mtu 9000; /usr/sbin/ip link set veth1 mtu 9000; sleep 1
cap ibv_devinfo-mtu9000.txt ibv_devinfo
# the RDMA array loses its optimized path: the target stops exporting the subsystem on port 4
run "rm $T/ports/4/subsystems/$N2"; rm $T/ports/4/subsystems/$N2
sleep 30
cap nvmeof-probe-after-port-loss.txt sh /nvmeof-probe.sh
cap kernel-log-after-port-loss.txt sh /kernel-log.sh
cap list-subsys-after-port-loss.json nvme list-subsys -o json
cap list-subsys-nvme5n1-after-port-loss.json nvme list-subsys /dev/nvme5n1 -o json
cap uname.txt uname -r
cap dmesg.txt dmesg
echo "=====BEGIN-OUT====="
cd / && tar -cf - out | gzip | base64
echo "=====END-OUT====="
poweroff -f
