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

# no_comma WHAT PATH: refuse (exit 2) a PATH with a comma: QEMU's option syntax
# (-drive file=...,format=..., -chardev path=...) splits values at commas, so such a path
# would be cut short or read as another option.
no_comma() {
    case "$2" in
    *,*) echo "$(basename "$0"): error: $1 '$2' contains a comma, which QEMU's option syntax cannot carry (commas separate options); use a path without one (rename it, or a symlink to it)" >&2
        exit 2 ;;
    esac
}
# Paths that end up in QEMU options (the image, the tests disk, logs, pcaps): refused early.
for _v in DEVMEM_LAB_CACHE DEVMEM_LAB_BUILD DEVMEM_LAB_OUT; do
    [ -z "${!_v:-}" ] || no_comma "$_v" "${!_v}"
done
unset _v

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

# die_infra MSG: a failure of the machinery (fetch, build, boot), not of a test: exit 3, the
# code a CI reads as "infrastructure" (README "Exit codes").
die_infra() {
    echo "$(basename "$0"): error: $*" >&2
    exit 3
}

# with_heartbeat WHAT LOG CMD...: run CMD with its output into LOG, printing a line at least every 30 s while it runs (what, elapsed, the log's last line),
# so a CI log never sits silent through a 10-minute build. Returns CMD's status.
with_heartbeat() {
    local what=$1 log=$2 pid t0=$SECONDS last rc=0
    shift 2
    "$@" >"$log" 2>&1 &
    pid=$!
    while ! wait_timeout "$pid" 30; do
        last=$(tail -n 1 "$log" 2>/dev/null | cut -c1-100 | tr -d '\r')
        step "$what: still running, $((SECONDS - t0)) s${last:+ (log: $last)}"
    done
    wait "$pid" || rc=$?
    return "$rc"
}

# wait_timeout PID SEC: true once PID has ended, false if it still runs after SEC seconds.
wait_timeout() {
    local i
    for ((i = 0; i < $2 * 2; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.5
    done
    ! kill -0 "$1" 2>/dev/null
}

# keep_log NAME FILE...: copy build logs into out/build-logs/ (CI uploads out/).
keep_log() {
    local name=$1
    shift
    mkdir -p "$DL_OUT/build-logs"
    local f
    for f in "$@"; do
        [ -f "$f" ] && cp -f "$f" "$DL_OUT/build-logs/$name-$(basename "$f")"
    done
    return 0
}

# ccache_setup: when ccache is installed (and DEVMEM_LAB_CCACHE is not 0), put Debian's
# ccache compiler links (/usr/lib/ccache: gcc, cc, ... -> ccache) first in PATH, and export
# what makes builds of the same sources in different directories (per-tree work copies, CI
# runners) hit the cache. The compiler's name stays 'gcc', so kbuild's and ninja's recorded
# command lines do not change and turning ccache on or off never forces a rebuild.
ccache_setup() {
    if [ "${DEVMEM_LAB_CCACHE:-1}" != 0 ] && [ -x /usr/lib/ccache/gcc ]; then
        case ":$PATH:" in *:/usr/lib/ccache:*) ;; *) export PATH=/usr/lib/ccache:$PATH ;; esac
        export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$DL_CACHE} CCACHE_NOHASHDIR=true
        export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
        export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-time_macros,include_file_mtime,include_file_ctime}
        export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
        DL_CCACHE="ccache ($CCACHE_DIR)"
    else
        DL_CCACHE="no ccache"
    fi
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

warn() {
    echo "$(basename "$0"): warning: $*" >&2
}

# check_qemu_tree DIR: is DIR a QEMU source tree? A version other than the tested $QEMU_VERSION
# is only a warning: the overlay's anchor checks (scripts/overlay-qemu) are the real test.
check_qemu_tree() {
    local d=$1 v
    [ -d "$d" ] || die "QEMU tree '$d' does not exist. Run scripts/fetch-sources, or set QEMU_SRC to a QEMU source tree."
    [ -f "$d/VERSION" ] && [ -f "$d/meson.build" ] && [ -d "$d/hw/net" ] ||
        die "'$d' is not a QEMU source tree (no VERSION/meson.build/hw/net). Point QEMU_SRC at a QEMU tree or unset it."
    v=$(cat "$d/VERSION")
    case "$v" in
    10.2.*) ;;
    *) warn "QEMU tree '$d' is version $v; devmem-lab is tested with $QEMU_VERSION. Trying it: the overlay's anchor checks will say if it does not fit." ;;
    esac
    check_not_built_in_place qemu "$d"
}

# check_kernel_tree DIR: is DIR a Linux source tree? A series other than the tested
# $KERNEL_SERIES is only a warning (see check_qemu_tree).
check_kernel_tree() {
    local d=$1 v p
    [ -d "$d" ] || die "kernel tree '$d' does not exist. Run scripts/fetch-sources, or set KERNEL_SRC to a Linux source tree."
    [ -f "$d/Makefile" ] && [ -f "$d/Kconfig" ] && [ -d "$d/net/core" ] ||
        die "'$d' is not a Linux source tree. Point KERNEL_SRC at a Linux tree or unset it."
    v=$(sed -n 's/^VERSION = //p' "$d/Makefile")
    p=$(sed -n 's/^PATCHLEVEL = //p' "$d/Makefile")
    [ "$v.$p" = "$KERNEL_SERIES" ] ||
        warn "kernel tree '$d' is Linux $v.$p; devmem-lab is tested with $KERNEL_SERIES. Trying it: the overlay's anchor checks and the selftest patches will say if it does not fit."
    check_not_built_in_place kernel "$d"
}

# is_git_tree DIR: is DIR the top of a git work tree (then git decides what is source)?
is_git_tree() {
    local top
    top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) || return 1
    [ "$(realpath "$top")" = "$(realpath "$1")" ]
}

# check_not_built_in_place WHAT DIR: a plain (non-git) tree with build output in it cannot be
# told apart from its sources; refuse it with the fix. Git trees are fine: only files git
# tracks or would track (not ignored) are copied, so .config, include/config, *.o stay out.
check_not_built_in_place() {
    local what=$1 d=$2
    is_git_tree "$d" && return 0
    case "$what" in
    kernel)
        if [ -f "$d/.config" ] || [ -d "$d/include/config" ] || [ -d "$d/arch/x86/include/generated" ]; then
            die "kernel tree '$d' was built in place (it has .config or include/config) and is not a git tree, so its build output cannot be told from its sources. Run 'make -C $d mrproper' (or use a git checkout of it), then retry."
        fi ;;
    qemu)
        if [ -f "$d/build/build.ninja" ] || [ -f "$d/build.ninja" ]; then
            die "QEMU tree '$d' was built in place (it has build.ninja) and is not a git tree. Remove its build dir (rm -rf '$d/build'), or use a git checkout, then retry."
        fi ;;
    esac
}

# Build outputs (overlaid work trees, build dirs). Separate dirs let several builds run at once.
DL_BUILD=${DEVMEM_LAB_BUILD:-$DL_CACHE/build}

# tree_key DIR: a short key naming a source tree (so trees from different places never mix).
tree_key() { realpath -m "$1" | sha256sum | cut -c1-12; }

# tree_files SRC: the source files of SRC, relative, NUL-separated and sorted. For a git tree:
# what git tracks plus untracked files it does not ignore (so build output, ignored by the
# tree's .gitignore, stays out); for a plain tree: every file but .git.
tree_files() {
    local src=$1
    if is_git_tree "$src"; then
        # Tracked files deleted in the work tree are gone for the build too.
        LC_ALL=C comm -z -23 \
            <(git -C "$src" ls-files -z -c -o --exclude-standard | LC_ALL=C sort -zu) \
            <(git -C "$src" ls-files -z -d | LC_ALL=C sort -zu)
    else
        (cd "$src" && find . -name .git -prune -o \( -type f -o -type l \) -printf '%P\0' | LC_ALL=C sort -z)
    fi | grep -zv -E '^\.devmem-lab-'
}

# tree_state SRC: one line naming the state of SRC's sources (scripts/cache-key's source
# key). Git: HEAD, the diff of the work tree against it and the untracked files' contents;
# plain: a size+mtime manifest (the same for two unpacked copies of one tarball; the work
# copy's own state, below, is by content).
tree_state() {
    local src=$1
    if is_git_tree "$src"; then
        {
            git -C "$src" rev-parse HEAD 2>/dev/null || echo no-commit
            git -C "$src" diff HEAD --binary 2>/dev/null || true
            (cd "$src" && git ls-files -z -o --exclude-standard | LC_ALL=C sort -z |
                xargs -0 -r sha256sum)
        } | sha256sum | sed "s|  *-\$| git:$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo none)|"
    else
        (cd "$src" && find . -name .git -prune -o \( -type f -o -type l \) -printf '%P %s %T@\n' |
            grep -v '^\.devmem-lab-' | LC_ALL=C sort) | sha256sum | sed 's|  *-$| plain|'
    fi
}

# The format of sync_work_tree's stamps: bumped when what they mean changes, so a stamp an
# earlier version wrote never matches.
DL_SYNC_FORMAT=2

# tree_git_meta SRC: what decides a git tree's file set and state besides its files: HEAD,
# and the stat of the index (what is tracked) and of the exclude files (what is ignored).
tree_git_meta() {
    local src=$1 f
    local -a paths
    git -C "$src" rev-parse HEAD 2>/dev/null || echo no-commit
    mapfile -t paths < <(cd "$src" && git rev-parse --git-path index --git-path info/exclude 2>/dev/null
        git -C "$src" config --path core.excludesFile 2>/dev/null ||
            echo "${XDG_CONFIG_HOME:-$HOME/.config}/git/ignore")
    for f in "${paths[@]}"; do
        (cd "$src" && stat -c '%n %s %.9Y %.9Z %i' -- "$f" 2>/dev/null) || echo "$f none"
    done
}

# sync_work_tree WHAT SRC WORK [KEEP...]: make WORK hold SRC's current sources, every run.
# Content decides, never mtimes: a file whose content differs from WORK's copy is copied,
# with the current time as its mtime (so make and ninja rebuild it even when SRC's copy is
# older than the object built from the old one: a tree updated by tar, cp -p or rsync -a);
# unchanged files keep their mtimes. New files are added, files gone from SRC removed. KEEP
# paths (files or dirs/, relative) belong to the overlay and are neither copied nor removed.
# Files are copied, never hard linked (and always replaced by a rename), so SRC is never
# written through and may live on another filesystem. Interrupted at any point, the next run
# still removes what SRC no longer has (the saved list names every file WORK may hold until
# the sync completes). WORK/.devmem-lab-src-state names the state of what WORK holds (a build
# input): a git tree's tree_state, a plain tree's content (sha256 of every file's).
# Fast path (issue 44): one find over SRC lists every file's type, size, mtime, ctime, inode
# and device; when that listing (and for git, HEAD, the index's and the exclude files' stat;
# and the KEEP set) is what it was after the last complete sync, nothing changed: any write,
# rename onto a file or utime() sets its ctime to the current time, which no user-space call
# can set back. A file whose ctime is less than 2 s old could be written again within the
# same clock tick without a trace, so a listing with one is never recorded. Otherwise
# scripts/lib/tree-sync.py reads (sha256) only the files whose stat changed since the last
# sync (and the racy ones), and copies those whose content differs.
sync_work_tree() {
    local what=$1 src=$2 work=$3 keep_re='^$' k list state stamp fast since git=0 content rc
    shift 3
    # (ERE-escaped in bash: a sed per KEEP path cost a second of every no-op under load)
    for k in "$@"; do
        k=${k//\\/\\\\}; k=${k//./\\.}; k=${k//\[/\\[}; k=${k//\*/\\*}; k=${k//^/\\^}; k=${k//\$/\\$}
        keep_re="$keep_re|^$k"
    done
    [ -f "$work/.devmem-lab-work" ] || step "$what: creating work tree $work (a copy of $src)"
    mkdir -p "$work"
    list=$work/.devmem-lab-files
    # (.old: the name an interrupted sync of earlier versions left the list under)
    [ -f "$list" ] || { [ -f "$list.old" ] && mv "$list.old" "$list"; } || : >"$list"
    is_git_tree "$src" && git=1
    # Files changed less than 2 s before this listing are 'racy' (above; 2 to 3 s, as the
    # listing's time is taken in whole seconds).
    since=$(($(date +%s) - 2))
    : >"$work/.devmem-lab-racy"
    find "$src" -name .git -prune -o \( -type f -o -type l \) -printf '%y %s %T@ %C@ %i %D\t%P\0' \
        \( -newerct "@$since" -fprintf "$work/.devmem-lab-racy" '%P\0' -o -true \) \
        >"$work/.devmem-lab-scan"
    fast=$( { echo "format $DL_SYNC_FORMAT"; printf '%s\n' "$keep_re"
        [ "$git" = 0 ] || tree_git_meta "$src"; cat "$work/.devmem-lab-scan"; } | sha256sum | cut -c1-16)
    # (.devmem-lab-fast: the listing's key and the sync's stamp it was recorded with, so a
    # sync by anything else, such as an earlier version of this function, voids it)
    if [ -f "$work/.devmem-lab-work" ] &&
            [ "$(cat "$work/.devmem-lab-fast" 2>/dev/null)" = "$fast $(cat "$work/.devmem-lab-synced" 2>/dev/null)" ]; then
        return 0
    fi
    rm -f "$work/.devmem-lab-fast" "$work/.devmem-lab-synced"
    # A git tree's state before its files are read: if it changes meanwhile, the next run
    # sees another listing and looks again.
    [ "$git" = 0 ] || state=$(tree_state "$src")
    tree_files "$src" | grep -zv -E "$keep_re" >"$list.new" || true
    [ -s "$list.new" ] || die "$what: no source files found in '$src'"
    # Until this sync completes the list names the old and the new files: all WORK may hold.
    LC_ALL=C sort -zu "$list" "$list.new" >"$list.tmp" && mv "$list.tmp" "$list"
    # Removed from SRC since the last run (and not the overlay's): remove from WORK.
    LC_ALL=C comm -z -23 "$list" "$list.new" | grep -zv -E "$keep_re" |
        (cd "$work" && xargs -0 -r rm -f --) || true
    # Content decides: read what can have changed, copy what differs (rsync -c, no -t).
    rc=0
    content=$(python3 "$DL_ROOT/scripts/lib/tree-sync.py" "$src" "$work" "$list.new" \
        "$work/.devmem-lab-manifest" "${since}000000000") || rc=$?
    if [ "$rc" != 0 ]; then
        cat "$work/.devmem-lab-sync.log" >&2 2>/dev/null || true
        die_infra "$what: could not copy '$src' to '$work' (disk full? set DEVMEM_LAB_BUILD to a roomier place)"
    fi
    [ "$git" = 1 ] || state="$content plain"
    stamp=$(printf '%s\n%s\n' "$state" "$keep_re" | sha256sum | cut -c1-16)
    k=$(grep -cv '/$' "$work/.devmem-lab-sync.out" || true)
    [ ! -f "$work/.devmem-lab-work" ] || [ "$k" = 0 ] || step "$what: $k changed file(s) copied from $src"
    mv "$list.new" "$list"
    rm -f "$work/.devmem-lab-src-head"
    printf '%s\n' "$state" | write_if_changed "$work/.devmem-lab-src-state"
    touch "$work/.devmem-lab-work"
    echo "$stamp" >"$work/.devmem-lab-synced"
    [ -s "$work/.devmem-lab-racy" ] || echo "$fast $stamp" >"$work/.devmem-lab-fast"
}

# build_dir_suffix SRC DEFAULT: "" for the fetched tree (keeps its build dirs' names),
# "-t<tree_key>" for a tree the user named, so trees never share a build dir.
build_dir_suffix() {
    if [ "$(realpath "$1" 2>/dev/null || echo "$1")" = "$(realpath "$2" 2>/dev/null || echo "$2")" ]; then
        echo ""
    else
        echo "-t$(tree_key "$1")"
    fi
}

# kernel_build_root SRC: where SRC's kernel work copy and build dirs live: $DL_BUILD for the
# fetched tree, $DL_BUILD/tree-<key> for a tree the user named. Inside it the work copy is
# always named after the fetched tree (kernel_work_name), so every tree's compile commands
# name their sources by the same relative path (../linux-work-<key>, after ccache's
# CCACHE_BASEDIR rewriting): a new tree's first build hits ccache for every file it shares
# with the fetched tree.
kernel_build_root() {
    local s
    s=$(build_dir_suffix "$1" "$DL_CACHE/src/linux-$KERNEL_SERIES")
    echo "$DL_BUILD${s:+/tree-${s#-t}}"
}
kernel_work_name() { echo "linux-work-$(tree_key "$DL_CACHE/src/linux-$KERNEL_SERIES")"; }

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

# probe_kvm QEMU KERNEL LOGDIR: can this host run KERNEL under KVM (exit 0), or why not
# (printed, exit 1)? Nested KVM without hardware paging
# can hang in instruction emulation, so "opens /dev/kvm" is not enough: boot the kernel
# to its root-mount panic under a short timeout. The answer is cached per host kernel.
probe_kvm() {
    local QEMU=$1 KERNEL=$2 LOGDIR=$3 cache key res
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "no /dev/kvm access"; return 1; }
    # Per host kernel, QEMU binary and CPU model: a cache restored on another kind of CI
    # runner must probe again.
    key=$(printf "%s %s %s %s" "$(uname -r)" "$(uname -v)" "$QEMU" \
        "$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null)" | sha256sum | cut -c1-12)
    cache=$DL_CACHE/kvm-probe-$key
    if [ -f "$cache" ]; then
        res=$(cat "$cache")
    else
        mkdir -p "$DL_CACHE"
        local prc=0
        timeout 20 "$QEMU" -M q35 -accel kvm -cpu host -m 256 -nodefaults -no-user-config \
            -display none -no-reboot -serial "file:$LOGDIR/kvm-probe.log" -kernel "$KERNEL" \
            -append "console=ttyS0 panic=-1 root=/dev/devmem-lab-probe" \
            >"$LOGDIR/kvm-probe.qemu.log" 2>&1 || prc=$?
        if grep -q 'Kernel panic' "$LOGDIR/kvm-probe.log"; then
            res=kvm
        elif [ "$prc" = 124 ]; then
            res=tcg
        else
            # QEMU refused to start under KVM: not a hang, so say why and don't cache.
            echo "QEMU failed under KVM: $(tail -n 1 "$LOGDIR/kvm-probe.qemu.log")"
            return 1
        fi
        echo "$res" >"$cache"
    fi
    [ "$res" = kvm ] || { echo "a probe boot under KVM hung or failed (cached in $cache)"; return 1; }
}
