#!/bin/sh
# mmdebstrap --customize-hook: $1 is the new root file system. Nothing here holds a secret:
# root's SSH key and the guests' host keys are made per lab and handed to a guest at boot
# through QEMU's fw_cfg (lab-keys.service below), so the image is the same for every lab.
set -eu
root="$1"

echo kvgate-lab > "$root/etc/hostname"
printf '/dev/vda / ext4 rw,noatime 0 1\n' > "$root/etc/fstab"

# the serial console: the kernel and a root login prompt on ttyS0 (no password is set)
ln -sf /lib/systemd/system/serial-getty@.service \
  "$root/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"

# sshd: key login only; the host keys come from fw_cfg, none is generated into the image
rm -f "$root"/etc/ssh/ssh_host_*
cat > "$root/etc/ssh/sshd_config.d/kvgate-lab.conf" <<'CONF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
CONF

# modules the lab loads at boot: fw_cfg (the keys), the NVMe-oF target and host, nfsd, rxe,
# device-mapper multipath and flakey (faults)
cat > "$root/etc/modules-load.d/kvgate-lab.conf" <<'CONF'
qemu_fw_cfg
nvmet
nvmet-tcp
nvmet-rdma
nvme-tcp
nvme-rdma
nfsd
rdma_rxe
dm-multipath
dm-flakey
CONF
echo 'options nvme_core multipath=Y' > "$root/etc/modprobe.d/kvgate-lab.conf"

# networking: the NIC with this MAC is QEMU's user network (DHCP; only the loopback-forwarded
# SSH reaches it); the lab links between guests are addressed by lab/setup/links.sh over SSH
cat > "$root/etc/systemd/network/10-slirp.network" <<'CONF'
[Match]
MACAddress=52:54:00:00:00:01
[Network]
DHCP=ipv4
CONF
ln -sf /lib/systemd/system/systemd-networkd.service \
  "$root/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"

install -m 0755 /dev/stdin "$root/usr/local/sbin/lab-keys" <<'SCRIPT'
#!/bin/sh
# Copy what this lab handed the guest through fw_cfg: host keys, root's authorized key,
# and hostname.
set -eu
modprobe qemu_fw_cfg
d=/sys/firmware/qemu_fw_cfg/by_name/opt/kvgate
get() { cat "$d/$1/raw"; }
for t in ed25519; do
  get ssh_host_${t}_key > /etc/ssh/ssh_host_${t}_key; chmod 600 /etc/ssh/ssh_host_${t}_key
  get ssh_host_${t}_key.pub > /etc/ssh/ssh_host_${t}_key.pub
done
install -d -m 700 /root/.ssh
get authorized_keys > /root/.ssh/authorized_keys; chmod 600 /root/.ssh/authorized_keys
hostname "$(get hostname)"; get hostname > /etc/hostname
SCRIPT
cat > "$root/etc/systemd/system/lab-keys.service" <<'CONF'
[Unit]
Description=kvgate lab: keys and hostname from QEMU fw_cfg
DefaultDependencies=no
After=systemd-remount-fs.service
Before=ssh.service systemd-networkd.service
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/lab-keys
RemainAfterExit=yes
[Install]
WantedBy=multi-user.target
CONF
ln -sf /etc/systemd/system/lab-keys.service \
  "$root/etc/systemd/system/multi-user.target.wants/lab-keys.service"

# boot faster under TCG: nothing waits for a network that is not the lab's
rm -f "$root/etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service"
