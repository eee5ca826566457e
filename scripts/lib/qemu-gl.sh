# SPDX-License-Identifier: GPL-2.0-or-later
# The GL variant of QEMU (scripts/build-qemu --variant gl, scripts/qemu-gl): its Debian build root
# and a way to run a command inside it. Sourced after common.sh, not run.

GLROOT_SUITE=${QEMU_GL_SUITE:-trixie}
GLROOT_LIST=$DL_ROOT/scripts/lib/qemu-gl-root.list
# glroot_packages: the root's package list, one a line, comments dropped.
glroot_packages() { sed 's/#.*//; /^[[:space:]]*$/d' "$GLROOT_LIST"; }
GLROOT_KEY=$({ echo "$GLROOT_SUITE"; glroot_packages; } | sha256sum | cut -c1-12)
GLROOT=$DL_CACHE/qemu-gl/root-$GLROOT_KEY
# Where a private tmpfs is mounted while a command runs in the root (an empty directory).
GLROOT_MNT=$DL_CACHE/qemu-gl/.mnt

# glroot_cmd PATH... -- CMD...: set GLROOT_CMD to the command line that runs CMD in the GL
# root (run it, or exec it to keep the PID): a private mount namespace with an
# overlay of the root whose writes go to a tmpfs and vanish (the cached root is never
# written), /proc, /sys and /dev, and nothing of the host but the PATHs, bound at the same
# place (an existing file or directory; for a path that does not exist yet, its parent).
# The environment is reset to PATH, HOME, TERM and what GLROOT_ENV (NAME=VALUE...) adds.
glroot_cmd() {
    local binds=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do binds+=("$1"); shift; done
    [ $# -gt 1 ] || die "glroot_cmd: no command"
    shift
    [ -d "$GLROOT/usr/bin" ] || die "no GL build root at $GLROOT: run scripts/build-qemu --variant gl"
    mkdir -p "$GLROOT_MNT"
    export GLROOT_ENV=${GLROOT_ENV:-}
    # shellcheck disable=SC2016
    GLROOT_CMD=(unshare --mount --propagation private -- /bin/bash -c '
        set -euo pipefail
        root=$1 mnt=$2 n=$3
        shift 3
        binds=("${@:1:n}")
        shift "$n"
        mount -t tmpfs devmem-lab-glroot "$mnt"
        mkdir "$mnt/upper" "$mnt/work" "$mnt/root"
        r=$mnt/root
        mount -t overlay devmem-lab-glroot -o "lowerdir=$root,upperdir=$mnt/upper,workdir=$mnt/work" "$r"
        mount -t proc proc "$r/proc"
        mount --rbind /sys "$r/sys"
        mount --rbind /dev "$r/dev"
        for p in "${binds[@]}"; do
            [ -e "$p" ] || p=$(dirname "$p")
            [ -e "$p" ] || continue
            if [ -d "$p" ]; then
                mkdir -p "$r$p"
            else
                mkdir -p "$r$(dirname "$p")"
                : >"$r$p"
            fi
            mount --bind "$p" "$r$p"
        done
        exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            TERM="${TERM:-dumb}" $GLROOT_ENV "$@"
    ' glroot "$GLROOT" "$GLROOT_MNT" "${#binds[@]}" "${binds[@]}" "$@")
}
