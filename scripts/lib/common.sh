# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for devmem-lab scripts: paths, versions, progress output.
# Sourced, not run.

DL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DL_CACHE=${DEVMEM_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/devmem-lab}
DL_OUT=${DEVMEM_LAB_OUT:-$DL_ROOT/out}

# The sources we build on: fetched by exact Debian version first; when the archive no longer
# has it, scripts/fetch-sources takes the newest of the same series and says so.
# DEVMEM_LAB_QEMU_DEB_VERSION / DEVMEM_LAB_KERNEL_DEB_VERSION override the exact versions.
QEMU_DEB_VERSION=${DEVMEM_LAB_QEMU_DEB_VERSION:-1:10.2.2+ds-1}
QEMU_VERSION=10.2.2
QEMU_SERIES=$(v=${QEMU_DEB_VERSION#*:}; echo "${v%%[!0-9]*}.$(echo "$v" | cut -d. -f2)")
KERNEL_PKG=linux-source-7.2
KERNEL_DEB_VERSION=${DEVMEM_LAB_KERNEL_DEB_VERSION:-7.2.13-1}
KERNEL_SERIES=7.2

DL_T0=${DL_T0:-$(date +%s)}
export DL_T0

# step MSG: a progress line with the elapsed time since the top-level command started.
step() {
    local now
    now=$(date +%s)
    printf '[%4ss] %s\n' "$((now - DL_T0))" "$*"
}

die() {
    echo "$(basename "$0"): error: $*" >&2
    exit 1
}

# write_if_changed FILE: stdin to FILE, only if the content differs (keeps mtimes for make/ninja).
write_if_changed() {
    local f=$1 tmp
    tmp=$(mktemp "$f.XXXXXX")
    cat >"$tmp"
    if [ -f "$f" ] && cmp -s "$tmp" "$f"; then
        rm -f "$tmp"
    else
        rm -f "$f"
        mv "$tmp" "$f"
    fi
}

# qemu_src / kernel_src: the trees in use (user's own, or our cache).
qemu_src() { echo "${QEMU_SRC:-$DL_CACHE/src/qemu-$QEMU_VERSION}"; }
kernel_src() { echo "${KERNEL_SRC:-$DL_CACHE/src/linux-$KERNEL_SERIES}"; }

# check_qemu_tree DIR: is DIR a QEMU 10.2.x source tree?
check_qemu_tree() {
    local d=$1 v
    [ -d "$d" ] || die "QEMU tree '$d' does not exist. Run scripts/fetch-sources, or set QEMU_SRC to a QEMU $QEMU_VERSION source tree."
    [ -f "$d/VERSION" ] && [ -f "$d/meson.build" ] && [ -d "$d/hw/net" ] ||
        die "'$d' is not a QEMU source tree (no VERSION/meson.build/hw/net). Point QEMU_SRC at a QEMU $QEMU_VERSION tree or unset it."
    v=$(cat "$d/VERSION")
    case "$v" in
    10.2.*) ;;
    *) die "QEMU tree '$d' is version $v; devmem-lab needs 10.2.x. Unset QEMU_SRC to use the fetched $QEMU_VERSION." ;;
    esac
}

# check_kernel_tree DIR: is DIR a Linux 7.2 source tree?
check_kernel_tree() {
    local d=$1 v p
    [ -d "$d" ] || die "kernel tree '$d' does not exist. Run scripts/fetch-sources, or set KERNEL_SRC to a Linux $KERNEL_SERIES tree."
    [ -f "$d/Makefile" ] && [ -f "$d/Kconfig" ] && [ -d "$d/net/core" ] ||
        die "'$d' is not a Linux source tree. Point KERNEL_SRC at a Linux $KERNEL_SERIES tree or unset it."
    v=$(sed -n 's/^VERSION = //p' "$d/Makefile")
    p=$(sed -n 's/^PATCHLEVEL = //p' "$d/Makefile")
    [ "$v.$p" = "$KERNEL_SERIES" ] ||
        die "kernel tree '$d' is Linux $v.$p; devmem-lab needs $KERNEL_SERIES. Unset KERNEL_SRC to use the fetched $KERNEL_PKG."
}

# Build outputs (overlaid work trees, build dirs). Separate dirs let several builds run at once.
DL_BUILD=${DEVMEM_LAB_BUILD:-$DL_CACHE/build}

# tree_key DIR: a short key naming a source tree (so trees from different places never mix).
tree_key() { realpath "$1" | sha256sum | cut -c1-12; }

# make_work_tree WHAT SRC WORK: create (once) WORK as a hard-linked copy of SRC. Files in it
# are only ever replaced (write_if_changed, rsync, cp --remove-destination), never written
# through, so SRC stays pristine.
make_work_tree() {
    local what=$1 src=$2 work=$3
    [ -f "$work/.devmem-lab-work" ] && return 0
    step "$what: creating work tree $work (hard links to $src)"
    rm -rf "$work.tmp"
    cp -al "$src" "$work.tmp"
    touch "$work.tmp/.devmem-lab-work"
    mv "$work.tmp" "$work"
}

# record_timing NAME KIND SECONDS: append a build timing to $DL_CACHE/timings.tsv (date, name,
# cold|incremental, wall seconds, cores, load average at the end) for scripts/bench to report.
record_timing() {
    mkdir -p "$DL_CACHE"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$1" "$2" "$3" "$(nproc)" \
        "$(cut -d' ' -f1 /proc/loadavg)" >>"$DL_CACHE/timings.tsv"
}

# console_splats LOG: print the first lines of LOG that show a kernel warning, oops, leak,
# hang or lifetime report (the patterns of scripts/lib/splats.txt, the one list every check
# uses); succeed (0) if there were any.
console_splats() {
    python3 "$DL_ROOT/scripts/lib/ktap.py" splats "$1"
}
