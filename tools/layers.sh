#!/bin/bash
# Check that every folder keeps its place: each dependency points down, and no
# module is in a circle. The rules, by folder:
#   lib/          libc and lib/ only
#   host/ images/ their own folder and lib/
#   guest/        guest/ and lib/ (static, libc only)
#   orchestrator/ layered, top to bottom:
#                 cmd -> run -> report -> history -> analysis -> model -> base
#                 where base is orchestrator/virt/, host/, images/ and lib/; a
#                 file may use its own layer or any below it, never above
#   tests/        anything (not checked)
# and nothing outside orchestrator/ (and tests/) includes orchestrator/.
# This script fails (exit 1, one line per violation) on:
#   - a dependency a rule forbids, direct or through other headers (the
#     compiler's own `$CC -MM -MG` list of each .c and .h, so nothing is kept by
#     hand); an indirect one names the include chain the compiler took;
#   - an include circle among the modules of one folder (one layer in
#     orchestrator/; a module is a .c and its .h of the same path stem), each
#     elementary circle printed once; one through two layers or folders has a
#     forbidden dependency, reported on its own line;
#   - a call circle: modules that call each other's functions, found in the
#     built objects (`nm`: the global symbols each object defines against those
#     it leaves undefined), printed as one line per strongly connected set;
#     this catches circles through a shared internal header, which the
#     includes do not show;
#   - a .c or .h in orchestrator/ outside its layer folders, or in a top folder
#     with no rule;
#   - a line of the allow-list that no circle matches any more.
# A circle whose members are exactly those of a line of the allow-list
# (tools/layers.allow: "MODULE... -- to be removed: REASON") is printed as
# "allowed:" and does not fail. Without objects the call circles are not
# checked, said on stderr. Last line: "layers: N files checked, N violations".
# Exit 2 on a usage error, a malformed allow-list or when the compiler cannot run.
#
#   tools/layers.sh [--root=DIR] [--cc=CC] [--objs=DIR] [--allow=FILE]
#                   [-IDIR|-DX|-UX|-isystemDIR|-iquoteDIR]...
#
# --root is the checkout to check (default: the one this script lives in); the
# compiler runs there with the project's flags (-std=gnu11 -D_GNU_SOURCE -I.,
# the Makefile's PKGS through pkg-config as -isystem, -DTHPEVAL_GUEST for
# guest/) plus any flags given. --objs is the build folder (default ROOT/build:
# ROOT/X.c is built as build/X.o, guest/X.c as build/g/guest/X.o); --allow the
# allow-list (default ROOT/tools/layers.allow; none when it does not exist).
#
# Direct includes (for the circles and for the chain an indirect violation is
# reported through) come from the same compiler run: `-H` prints every header it
# opens with its depth, so each line's parent is the last line one level up. That
# is the compiler's own resolution under the real flags and #if's, not a second
# parser of #include lines. One gap, harmless here: a header already read through
# the same lookup earlier in a translation unit is not printed again, so that
# repeated direct edge is missing; the header is then reachable through the
# earlier chain, and every header is also checked as its own translation unit,
# so reachability between modules (and so every circle) is unchanged; only the
# printed circle may route through that chain.
set -u

usage() {
	echo "usage: tools/layers.sh [--root=DIR] [--cc=CC] [--objs=DIR] [--allow=FILE] [-IDIR|-DX|-UX|-isystemDIR|-iquoteDIR]..." >&2
	exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd -P) || exit 2
cc=gcc
objs=""
allow=""
extra=()
for a in "$@"; do
	case $a in
	--root=?*) root=${a#--root=} ;;
	--cc=?*) cc=${a#--cc=} ;;
	--objs=?*) objs=${a#--objs=} ;;
	--allow=?*) allow=${a#--allow=} ;;
	-I?* | -D?* | -U?* | -isystem?* | -iquote?*) extra+=("$a") ;;
	-h | --help)
		sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
		exit 0
		;;
	*)
		echo "layers: unknown argument '$a'" >&2
		usage
		;;
	esac
done
# relative --objs and --allow are taken from where the script was started
[ -n "$objs" ] && [ "${objs#/}" = "$objs" ] && objs=$PWD/$objs
[ -n "$allow" ] && [ "${allow#/}" = "$allow" ] && allow=$PWD/$allow

if ! abs=$(cd "$root" 2>/dev/null && pwd -P); then
	echo "layers: cannot enter the root '$root': pass --root=DIR, a thpeval checkout" >&2
	exit 2
fi
root=$abs
if [ ! -d "$root/orchestrator" ]; then
	echo "layers: no orchestrator/ under '$root': pass --root=DIR, a thpeval checkout" >&2
	exit 2
fi
if ! "$cc" -E -x c /dev/null >/dev/null 2>&1; then
	echo "layers: cannot run the compiler '$cc': install gcc (tools/deps.sh) or pass --cc=CC" >&2
	exit 2
fi
[ -n "$objs" ] || objs=$root/build
if [ -z "$allow" ] && [ -f "$root/tools/layers.allow" ]; then
	allow=$root/tools/layers.allow
fi
if [ -n "$allow" ] && [ ! -r "$allow" ]; then
	echo "layers: cannot read the allow-list '$allow': pass --allow=FILE, an existing file" >&2
	exit 2
fi
if [ -n "$allow" ]; then
	bad=$(grep -nEv '^[[:space:]]*(#|$)|^(call|include) [^ ].* -- to be removed: .*[^[:space:]]' "$allow" | head -n1)
	if [ -n "$bad" ]; then
		echo "layers: $allow:${bad%%:*}: want \"call|include MODULE... -- to be removed: REASON\"" >&2
		exit 2
	fi
fi
cd "$root" || exit 2

flags=(-std=gnu11 -D_GNU_SOURCE -I.)
# the libraries' include directories as system ones, so -MM leaves them out
if [ -f Makefile ] && command -v "${PKG_CONFIG:-pkg-config}" >/dev/null 2>&1; then
	pkgs=$(sed -n 's/^PKGS[[:space:]]*:\{0,1\}=[[:space:]]*//p' Makefile)
	# shellcheck disable=SC2086 # one word per package
	for f in $("${PKG_CONFIG:-pkg-config}" --cflags-only-I $pkgs 2>/dev/null); do
		flags+=("-isystem${f#-I}")
	done
fi
flags+=("${extra[@]}")

tmp=$(mktemp -d /tmp/thpeval-layers.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

# one record per file: its -MM rule and its -H tree
: >"$tmp/all"
while IFS= read -r f; do
	fl=("${flags[@]}")
	[ "${f#guest/}" != "$f" ] && fl+=(-DTHPEVAL_GUEST)
	if ! "$cc" "${fl[@]}" -MM -MG -H -MT "$f" "$f" >"$tmp/mm" 2>"$tmp/h"; then
		why=$(grep -m1 'error' "$tmp/h")
		echo "layers: '$cc -MM' failed on $f: ${why:-no message}; fix the file or pass its include flags" >&2
		exit 2
	fi
	{
		printf '@@file %s\n@@mm\n' "$f"
		cat "$tmp/mm"
		echo "@@h"
		cat "$tmp/h"
	} >>"$tmp/all"
done < <(find . \( -path ./tests -o -path ./build -o -path ./bin -o -path ./.git -o -path "./debian/*" \) -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | LC_ALL=C sort)

# one record per object whose source is in the tree: "@@obj WORLD MODULE", then
# "D SYMBOL" for each global it defines and "U SYMBOL" for each it uses; lib/
# is linked into both worlds (c: bin/thpeval, g: the static guest)
nobjs=0
if [ -d "$objs" ]; then
	while IFS= read -r o; do
		rel=${o#"$objs"/}
		case $rel in
		g/guest/*) world=g mod=${rel#g/} ;;
		g/* | tests/*) continue ;;
		lib/*) world=b mod=$rel ;;
		*) world=c mod=$rel ;;
		esac
		mod=${mod%.o}
		[ -f "$mod.c" ] || continue
		if ! nm -P "$o" >"$tmp/nm" 2>"$tmp/nmerr"; then
			echo "layers: cannot read the symbols of '$o': $(head -n1 "$tmp/nmerr"); rebuild it (make)" >&2
			exit 2
		fi
		nobjs=$((nobjs + 1))
		echo "@@obj $world $mod" >>"$tmp/all"
		awk '$2 ~ /^[TWVDBRGS]$/ { print "D", $1 } $2 == "U" { print "U", $1 }' "$tmp/nm" >>"$tmp/all"
	done < <(find "$objs" -name '*.o' -type f | LC_ALL=C sort)
fi
if [ "$nobjs" -eq 0 ]; then
	echo "note: call circles not checked: no objects under '$objs' (run make first, or pass --objs=DIR)" >&2
fi

awk -v root="$root" -v allowfile="$allow" -v nobjs="$nobjs" '
BEGIN {
	rank["cmd"] = 6; rank["run"] = 5; rank["report"] = 4; rank["history"] = 3
	rank["analysis"] = 2; rank["model"] = 1; rank["virt"] = 0
	uses["lib"] = "libc and lib/"; uses["host"] = "host/ and lib/"
	uses["images"] = "images/ and lib/"; uses["guest"] = "guest/ and lib/"
	nfiles = 0; nv = 0; cur = ""; badallow = 0; nallow = 0
	if (allowfile != "")
		readallow()
	if (badallow)
		exit 2
}
# the allow-list: "call|include MODULE... -- to be removed: REASON" a line
function readallow(   line, n, k, i, mem, key) {
	n = 0
	while ((getline line < allowfile) > 0) {
		n++
		if (line ~ /^[ \t]*(#|$)/)
			continue
		k = index(line, " -- to be removed: ")
		if (line !~ /^(call|include) [^ ]/ || k == 0 || substr(line, k + 19) ~ /^[ \t]*$/) {
			printf "layers: %s:%d: want \"call|include MODULE... -- to be removed: REASON\"\n", allowfile, n > "/dev/stderr"
			badallow = 1
			return
		}
		split(substr(line, 1, k - 1), mem, /[ \t]+/)
		key = setkey(mem)
		allowreason[key] = substr(line, k + 4)
		allowline[key] = n
		nallow++
	}
	close(allowfile)
}
# "KIND m1 m2 ...": the kind (mem[1]) and the members mem[2..], sorted, once each
function setkey(mem,   n, i, j, m, out, k, u) {
	n = 0
	for (i in mem)
		n++
	for (i = 3; i <= n; i++) {
		m = mem[i]
		for (j = i - 1; j >= 2 && mem[j] > m; j--)
			mem[j + 1] = mem[j]
		mem[j + 1] = m
	}
	out = mem[1]
	for (i = 2; i <= n; i++)
		if (mem[i] != "" && mem[i] != mem[i - 1])
			out = out " " mem[i]
	return out
}
# a circle found: a violation unless the allow-list names exactly its members
function circle(key, text) {
	if (key in allowreason) {
		allowed[++na] = "allowed: " text " (" allowreason[key] ")"
		allowseen[key] = 1
		return
	}
	violation(text)
}
# a path relative to the root, "." and ".." folded; absolute when outside it
function norm(p,   parts, out, n, k, i, abs, res) {
	if (index(p, root "/") == 1)
		p = substr(p, length(root) + 2)
	abs = substr(p, 1, 1) == "/"
	n = split(p, parts, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (parts[i] == "" || parts[i] == ".")
			continue
		if (parts[i] == ".." && k > 0 && out[k] != "..") {
			k--
			continue
		}
		out[++k] = parts[i]
	}
	res = ""
	for (i = 1; i <= k; i++)
		res = res (i > 1 ? "/" : "") out[i]
	return (abs ? "/" : "") res
}
# an orchestrator layer (cmd .. virt), unlayered (elsewhere in orchestrator/),
# lib, host, images, guest, outside (elsewhere in the repository) or system
function layer(p,   rest, d) {
	if (p ~ /^\// || p ~ /^\.\.\//)
		return "system"
	if (p ~ /^orchestrator\//) {
		rest = substr(p, 14)
		if (index(rest, "/") == 0)
			return "unlayered"
		d = substr(rest, 1, index(rest, "/") - 1)
		return (d in rank) ? d : "unlayered"
	}
	d = top(p)
	if (d in uses)
		return d
	return "outside"
}
function exists(p,   line, r) {
	r = (getline line < p)
	if (r >= 0)
		close(p)
	return r >= 0
}
function top(p) {
	return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : p
}
function module(p) {
	sub(/\.[ch]$/, "", p)
	return p
}
# why a file of layer lf may not depend on p, or ""
function badfor(lf, p,   lp) {
	lp = layer(p)
	if (lp == "system")
		return ""
	if (lf in rank) {
		if (lp in rank)
			return rank[lp] > rank[lf] ? lp " is above " lf : ""
		if (lp == "unlayered" || lp == "lib" || lp == "host" || lp == "images")
			return ""
		return exists(p) ? top(p) " is outside the layers" : ""
	}
	if (lp in rank || lp == "unlayered")
		return "nothing outside orchestrator/ includes it"
	if (lp == lf || lp == "lib")
		return ""
	if (lp == "outside" && !exists(p))
		return ""
	return lf " uses " uses[lf] " only"
}
function violation(msg) {
	viol[++nv] = "layers: " msg
}
# the file just read: its own place, then each dependency -MM listed
function finish(   lf, n, deps, i, d, why, chain, links, nl, j, seen) {
	if (cur == "")
		return
	nfiles++
	lf = layer(cur)
	if (lf == "unlayered") {
		violation(cur " is not in a layer folder (cmd, run, report, history, analysis, model, virt)")
		return
	}
	if (lf == "outside") {
		violation(cur " is in no folder with rules (lib, host, images, guest, orchestrator)")
		return
	}
	sub(/^[^:]*:/, "", mm)
	n = split(mm, deps, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (deps[i] == "")
			continue
		d = norm(deps[i])
		if (d == cur || d in seen)
			continue
		seen[d] = 1
		why = badfor(lf, d)
		if (why == "")
			continue
		# reached through a header that is itself a violation: that one is reported
		chain = (d in first) ? first[d] : ""
		nl = split(chain, links, / -> /)
		for (j = 1; j <= nl; j++)
			if (badfor(lf, links[j]) != "")
				break
		if (nl > 0 && j <= nl)
			continue
		violation(cur " depends on " d " (" why ")" (chain != "" ? " through " chain : ""))
	}
}
# the module graph keeps the includes within one folder, in orchestrator/ within
# one layer (and those from or to a file in no layer folder): a circle through
# two folders or layers has a forbidden dependency, which is a violation line of
# its own and breaks the circle once fixed; listing those circles as well would
# only repeat it
function edge(a, b,   ma, mb, la, lb) {
	if (top(a) != top(b) || !(top(a) in uses || top(a) == "orchestrator"))
		return
	la = layer(a); lb = layer(b)
	if (la != lb && la != "unlayered" && lb != "unlayered")
		return
	ma = module(a); mb = module(b)
	if (ma == mb)
		return
	adj[ma, mb] = 1
	node[ma] = 1; node[mb] = 1
}
$1 == "@@file" {
	finish()
	cur = norm(substr($0, 8)); mm = ""; sect = ""; guards = 0
	split("", first); split("", stack)
	next
}
$1 == "@@obj" {
	finish()
	cur = ""; sect = "obj"; oworld = $2; omod = $3
	cnode[omod] = 1
	next
}
sect == "obj" && $1 == "D" {
	if (oworld == "b") {
		def["c", $2] = omod; def["g", $2] = omod
	} else
		def[oworld, $2] = omod
	next
}
sect == "obj" && $1 == "U" {
	nu++; uworld[nu] = oworld == "b" ? "c" : oworld; umod[nu] = omod; usym[nu] = $2
	next
}
$0 == "@@mm" { sect = "mm"; next }
$0 == "@@h" { sect = "h"; next }
sect == "mm" {
	line = $0
	sub(/\\$/, "", line)
	mm = mm " " line
	next
}
sect == "h" && /^Multiple include guards may be useful for:/ { guards = 1; next }
sect == "h" && !guards && /^\.+ / {
	depth = index($0, " ") - 1
	p = norm(substr($0, depth + 2))
	if (!(p in first)) {
		chain = ""
		for (i = 1; i < depth; i++)
			chain = chain (i > 1 ? " -> " : "") stack[i]
		first[p] = chain
	}
	stack[depth] = p
	edge(depth == 1 ? cur : stack[depth - 1], p)
	next
}
# names (the keys of set) sorted into out[1..]; their number
function sorted(set, out,   n, m, i, j) {
	n = 0
	for (m in set)
		out[++n] = m
	for (i = 2; i <= n; i++) {
		m = out[i]
		for (j = i - 1; j >= 1 && out[j] > m; j--)
			out[j + 1] = out[j]
		out[j + 1] = m
	}
	return n
}
# Tarjan over gnb[1..]: each strongly connected set gets its number in comp[]
function connect(v,   list, cnt, k, w) {
	idx[v] = low[v] = ++counter
	tstack[++tsp] = v; onstack[v] = 1
	cnt = split(gnb[v], list, " ")
	for (k = 1; k <= cnt; k++) {
		w = list[k] + 0
		if (!(w in idx)) {
			connect(w)
			if (low[w] < low[v])
				low[v] = low[w]
		} else if (onstack[w] && idx[w] < low[v])
			low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		ncomp++
		do {
			w = tstack[tsp--]
			onstack[w] = 0
			comp[w] = ncomp
		} while (w != v)
	}
}
# the circles of the graph gname[1..n] (sorted), gnb[]: each strongly connected
# set of two or more modules, one line naming its members, smallest first
function sccs(kind, n,   i, j, c, mem, cnt, text, size, done) {
	split("", idx); split("", low); split("", onstack); split("", comp)
	counter = 0; tsp = 0; ncomp = 0
	for (i = 1; i <= n; i++)
		if (!(i in idx))
			connect(i)
	for (i = 1; i <= n; i++)
		size[comp[i]]++
	for (i = 1; i <= n; i++) {
		c = comp[i]
		if (size[c] < 2 || c in done)
			continue
		done[c] = 1
		split("", mem)
		mem[1] = kind; cnt = 1; text = ""
		for (j = i; j <= n; j++)
			if (comp[j] == c) {
				mem[++cnt] = gname[j]
				text = text " " gname[j]
			}
		circle(setkey(mem), kind " circle:" text)
	}
}
# the include graph: modules that include each other within a folder or layer
function includecircles(   n, i, j) {
	split("", gname); split("", gnb)
	n = sorted(node, gname)
	for (i = 1; i <= n; i++)
		for (j = 1; j <= n; j++)
			if ((gname[i], gname[j]) in adj)
				gnb[i] = gnb[i] " " j
	sccs("include", n)
}
# the call graph: each use of a global resolved to the module defining it in the
# same program
function callcircles(   n, i, t, id, a, b) {
	split("", gname); split("", gnb)
	n = sorted(cnode, gname)
	for (i = 1; i <= n; i++)
		id[gname[i]] = i
	for (i = 1; i <= nu; i++) {
		t = def[uworld[i], usym[i]]
		if (t == "" || t == umod[i])
			continue
		a = id[umod[i]]; b = id[t]
		if ((a, b) in cadj)
			continue
		cadj[a, b] = 1
		gnb[a] = gnb[a] " " b
	}
	sccs("call", n)
}
END {
	if (badallow)
		exit 2
	finish()
	includecircles()
	if (nobjs > 0)
		callcircles()
	for (key in allowline)
		if (!(key in allowseen) && (nobjs > 0 || key ~ /^include /))
			violation(norm(allowfile) ":" allowline[key] ": no such circle any more (" key "): remove the line")
	for (i = 1; i <= na; i++)
		print allowed[i]
	for (i = 1; i <= nv; i++)
		print viol[i]
	printf "layers: %d file%s checked, %d violation%s\n", nfiles, nfiles == 1 ? "" : "s", nv, nv == 1 ? "" : "s"
	exit nv > 0
}' "$tmp/all"
