#!/bin/sh
# the QEMU guest of issue 14 (h-rec3): Debian 12's kernel 6.1.0-57, two emulated NVMe drives
# (the second reports SMART critical warning 0x04 through QEMU's smart_critical_warning property)
cd /tmp/h-rec3/guest && exec timeout 580 qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp 2 -nographic -no-reboot \
 -kernel /tmp/h-rec3/pk/k/boot/vmlinuz-6.1.0-57-amd64 -initrd initrd.gz -append "console=ttyS0 panic=-1" \
 -drive file=qnvme0.img,if=none,id=d0,format=raw -device nvme,serial=KVGATEQEMU0,drive=d0 \
 -drive file=qnvme1.img,if=none,id=d1,format=raw -device nvme,serial=KVGATEQEMU1,drive=d1,smart_critical_warning=4 \
 -net none
