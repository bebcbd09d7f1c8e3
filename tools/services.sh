#!/bin/sh
# Start virtlogd and libvirtd if they are not running (there may be no systemd),
# and wait until libvirtd's socket answers. Needs root.
set -eu

SOCK=/run/libvirt/libvirt-sock

if [ "$(id -u)" -ne 0 ]; then
	echo "thpeval: starting libvirtd needs root; skipping (use --connect to reach a running one)" >&2
	exit 0
fi
# hugetlbfs before libvirtd: it looks for hugetlbfs mounts when it starts, and the
# --host-backing=hugetlbfs reference arm needs one
if ! grep -q ' hugetlbfs ' /proc/mounts && [ -d /sys/kernel/mm/hugepages ]; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null ||
		echo "thpeval: cannot mount hugetlbfs on /dev/hugepages (the hugetlbfs arm will not run)" >&2
fi
# and one of 1G pages where the host offers them, for --host-backing=...,hugetlbfs-1g
if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ] &&
	! grep -q ' hugetlbfs .*pagesize=1024M' /proc/mounts; then
	mkdir -p /dev/hugepages1G
	mount -t hugetlbfs -o pagesize=1G hugetlbfs /dev/hugepages1G 2>/dev/null ||
		echo "thpeval: cannot mount hugetlbfs of 1G pages on /dev/hugepages1G (the hugetlbfs-1g arm will not run)" >&2
fi
if ! pgrep -x virtlogd >/dev/null 2>&1; then
	virtlogd -d
fi
if ! pgrep -x libvirtd >/dev/null 2>&1; then
	# Under a reaper (tini -s, a child subreaper): libvirtd double-forks QEMU, and
	# where PID 1 is slow to reap orphans (containers, microVMs) every guest
	# teardown would wait for it (~2 s here); tini reaps them at once.
	if command -v tini >/dev/null 2>&1; then
		mkdir -p /var/log/libvirt
		setsid tini -s -- libvirtd </dev/null >>/var/log/libvirt/libvirtd-stdout.log 2>&1 &
	else
		libvirtd -d
	fi
fi
i=0
while [ ! -S "$SOCK" ]; do
	i=$((i + 1))
	if [ "$i" -gt 100 ]; then
		echo "thpeval: libvirtd did not create $SOCK within 10 s; see /var/log/libvirt/libvirtd.log" >&2
		exit 1
	fi
	sleep 0.1
done
