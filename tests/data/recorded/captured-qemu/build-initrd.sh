#!/bin/bash
# Builds a busybox initramfs that runs Debian 12's nvme-cli against a real kernel NVMe-oF target (nvmet)
set -euo pipefail
W=/tmp/h-rec3; R=$W/guest/root; K=$W/pk/k/lib/modules/6.1.0-57-amd64/kernel
rm -rf $R; mkdir -p $R/{bin,sbin,lib,lib64,mods,proc,sys,dev,tmp,etc/nvme,out,usr/bin,usr/sbin,run,var}
cp $W/pk/bb/bin/busybox $R/bin/busybox
for a in $($R/bin/busybox --list); do [ -e $R/bin/$a ] || ln -s busybox $R/bin/$a; done
copy_bin() { cp "$1" "$R$1"; for l in $(ldd "$1" | grep -o '/[^ ]*\.so[^ ]*'); do mkdir -p "$R$(dirname $l)"; cp -L "$l" "$R$l"; done; }
copy_bin /usr/sbin/nvme; copy_bin /usr/sbin/ip; copy_bin /usr/bin/rdma
mods="crct10dif_common crct10dif_generic crc-t10dif crc64 crc64_rocksoft_generic crc64-rocksoft t10-pi configfs
 nvme-core nvme nvme-fabrics nvme-tcp nvmet nvmet-tcp
 crc32_generic ib_core ib_uverbs ib_cm iw_cm rdma_cm udp_tunnel ip6_udp_tunnel rdma_rxe veth nvme-rdma nvmet-rdma"
: > $R/mods/order
for m in $mods; do f=$(find $K -name "$m.ko" | head -1); [ -n "$f" ] || { echo "missing $m"; exit 1; }; cp $f $R/mods/; echo $m >> $R/mods/order; done
mkdir -p $R/trixie/usr/sbin $R/trixie/lib
T=$W/trixie/root/usr/lib/x86_64-linux-gnu
cp $W/trixie/root/usr/sbin/nvme $R/trixie/usr/sbin/nvme
for l in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libnvme.so.1 libnvme-mi.so.1 libjson-c.so.5 libkeyutils.so.1 libssl.so.3 libcrypto.so.3 libz.so.1; do cp -L $T/$l $R/trixie/lib/; done
printf '#!/bin/sh\nexec /trixie/lib/ld-linux-x86-64.so.2 --library-path /trixie/lib /trixie/usr/sbin/nvme "$@"\n' > $R/nvme213; chmod +x $R/nvme213
cp -a $W/pk/ib/usr $W/pk/ib/etc $R/; cp -a $W/pk/ib/lib/. $R/lib/  # ibverbs-utils, libibverbs1, ibverbs-providers, libnl (Debian 12)
mkdir -p $R/bullseye/lib $R/bullseye/usr/sbin; B=$W/bullseye/root  # nvme-cli 1.12 of Debian 11 with its glibc 2.31
cp $B/usr/sbin/nvme $R/bullseye/usr/sbin/nvme; cp -L $B/lib/x86_64-linux-gnu/ld-2.31.so $B/lib/x86_64-linux-gnu/libc.so.6 $B/usr/lib/x86_64-linux-gnu/libuuid.so.1 $R/bullseye/lib/
printf '#!/bin/sh\nexec /bullseye/lib/ld-2.31.so --library-path /bullseye/lib /bullseye/usr/sbin/nvme "$@"\n' > $R/nvme112; chmod +x $R/nvme112
cp $W/guest/init $R/init; chmod +x $R/init
cp $W/guest/nvmeof-probe.sh $W/guest/roce-probe.sh $W/guest/cm-probe.sh $W/guest/kernel-log.sh $R/
(cd $R && find . | /tmp/h-rec3/pk/bb/bin/busybox cpio -o -H newc | gzip -1) > $W/guest/initrd.gz
ls -la $W/guest/initrd.gz
