#!/bin/sh
# Address the lab links: LINKS="mac=address/prefix ..." (the NIC is found by its MAC).
set -eu
for pair in $LINKS; do
  mac=${pair%%=*}; addr=${pair#*=}
  dev=$(ip -o link | awk -v m="$mac" '$0 ~ m {sub(":", "", $2); print $2}')
  [ -n "$dev" ] || { echo "no NIC with MAC $mac" >&2; exit 1; }
  ip link set "$dev" up
  ip addr replace "$addr" dev "$dev"
done
