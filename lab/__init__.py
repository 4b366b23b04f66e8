"""The QEMU lab (docs/lab-vm.md): real kernels for kvgate's storage paths, from Debian packages.

image.py    the guest image from lab/recipe/, cached by the recipe's hash
guests.py   the topology: the array and client guests, their ports, drives and links
qemu.py     one guest's QEMU: command line, KVM probe (else TCG), start, stop, QMP
labctl.py   `python3 -m lab.labctl up|down|status`: boot the lab, set it up over SSH, stop it
setup/      the shell run on each guest over SSH: links, the array's targets, the client's mounts
"""
