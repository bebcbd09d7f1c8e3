#!/bin/sh
# A QEMU that makes TCG guests really slower: an emulator wrapper for
# `thpeval run --emulator=...` (libvirt <emulator>), used as the "B" of an
# in-run A/B check or as the slowed setup of the gate bench.
#
#   bench/slow-qemu.sh --install DIR [MODE]   write DIR/slow-qemu-MODE (mode
#                                             baked in: libvirt passes QEMU no
#                                             environment) and print its path
#   DIR/slow-qemu-MODE ARGS...                exec the real QEMU with ARGS changed
#
# MODE (default nochain):
#   nochain      -d nochain -D /dev/null: QEMU stops chaining translated
#                blocks, so every block returns to its dispatch loop (a TCG
#                slowdown of all guest code, the kind a QEMU regression makes)
#   tb-size=N    -accel tcg becomes -accel tcg,tb-size=N: a translation-block
#                cache of N MiB (QEMU's default is 1 GiB), so QEMU flushes it
#                and translates again whenever the guest's code outgrows it
# Only a TCG guest's command line changes (libvirt passes -accel tcg, or
# accel=tcg in -machine on older libvirt); libvirt's capability probes and
# KVM guests run QEMU as given. The real QEMU: $SLOW_QEMU_REAL when
# installing, else /usr/bin/qemu-system-x86_64.
set -eu

MODE=nochain
REAL=/usr/bin/qemu-system-x86_64

if [ "${1-}" = --install ]; then
	[ $# -ge 2 ] || { echo "usage: $0 --install DIR [nochain|tb-size=N]" >&2; exit 2; }
	dir=$2
	mode=${3:-nochain}
	real=${SLOW_QEMU_REAL:-$REAL}
	case $mode in
	nochain) ;;
	tb-size=[1-9]*) case ${mode#tb-size=} in *[!0-9]*) echo "$0: '$mode': N must be MiB, e.g. tb-size=4" >&2; exit 2 ;; esac ;;
	*) echo "$0: '$mode' is not a mode: use nochain or tb-size=N" >&2; exit 2 ;;
	esac
	[ -x "$real" ] || { echo "$0: the real QEMU '$real' is not executable: set SLOW_QEMU_REAL" >&2; exit 1; }
	mkdir -p "$dir"
	out=$dir/slow-qemu-$(printf '%s' "$mode" | tr '=' '-')
	# QEMU runs as libvirt's QEMU user: the copy and its directory must be readable by it
	sed -e "s|^MODE=.*|MODE=$mode|" -e "s|^REAL=.*|REAL=$real|" "$0" >"$out.tmp"
	chmod 0755 "$out.tmp" "$dir"
	mv "$out.tmp" "$out"
	# libvirt runs QEMU as its own user: every directory above the copy must let it through
	d=$(cd "$dir" && pwd)
	while [ "$d" != / ]; do
		case $(stat -c %A "$d") in
		*x | *t) ;;
		*) echo "$0: '$d' is not searchable by other users: libvirt's QEMU user cannot run $out" >&2; exit 1 ;;
		esac
		d=$(dirname "$d")
	done
	echo "$out"
	exit 0
fi

# the arguments, rewritten where they name TCG
tcg=0
extra=
n=$#
i=0
prev=
while [ "$i" -lt "$n" ]; do
	a=$1
	shift
	i=$((i + 1))
	if [ "$prev" = -accel ] && [ "$a" = tcg ]; then
		tcg=1
		case $MODE in tb-size=*) a="tcg,$MODE" ;; esac
	elif [ "$prev" = -machine ]; then
		case ,$a, in
		*,accel=tcg,*)
			tcg=1
			case $MODE in
			tb-size=*)
				# QEMU refuses -accel beside -machine accel=: move it out
				a=$(printf '%s' ",$a," | sed -e 's/,accel=tcg,/,/' -e 's/^,//' -e 's/,$//')
				extra="tcg,$MODE"
				;;
			esac
			;;
		esac
	fi
	set -- "$@" "$a"
	if [ -n "$extra" ]; then
		set -- "$@" -accel "$extra"
		extra=
	fi
	prev=$a
done
if [ "$tcg" = 1 ] && [ "$MODE" = nochain ]; then
	set -- "$@" -d nochain -D /dev/null
fi
exec "$REAL" "$@"
