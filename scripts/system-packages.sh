#!/usr/bin/env bash
# Install the Debian packages kvgate needs on the control node (and this demo machine):
# fio (G2), openssh-server (real sshd in tests), poppler-utils (pdftotext, pdftoppm in tests),
# chromium (headless: the report tests open every HTML report in it),
# nvme-cli and pciutils (G1 facts), podman (an engine in a container, in tests), pango (WeasyPrint PDFs), cmake and g++ (the CPU engine build),
# qemu-system-x86, qemu-utils, mmdebstrap and e2fsprogs (the lab's QEMU guests, lab/). Only missing ones are installed.
# tcpdump (make bench: kvgate's client timings against a loopback capture).
set -euo pipefail
want=(fio openssh-server openssh-client poppler-utils nvme-cli pciutils iproute2 util-linux
      libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core python3-venv cmake g++ chromium podman
      qemu-system-x86 qemu-utils mmdebstrap e2fsprogs tcpdump)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing system packages: ${missing[*]}"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
