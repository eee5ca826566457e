#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tree-sync.py: the per-file half of scripts/lib/common.sh's sync_work_tree.

Usage: tree-sync.py SRC WORK FILES CACHE SINCE_NS

Brings the files FILES names (NUL-separated, relative to SRC) into WORK, reading the
content only of files that can have changed, and prints the content state of the set:
sha256 over every (path, sha256 of its content), sorted by path.

CACHE (read if present, rewritten after a complete sync) holds one record per file:
"<size> <mtime_ns> <ctime_ns> <inode> <dev>" as seen in SRC before it was last read,
the mode and sha256 of the copy WORK holds, and the path. A file whose record matches its stat
now is unchanged since then: any write, rename onto it or utime() call sets its ctime to
the current time, which no user-space call can set back. Two writes in the same tick of
the file system's clock leave the same ctime, so a file whose ctime is not older than
SINCE_NS (taken before SRC is looked at, minus the tick's worst case) is 'racy': read
every time until it has been quiet that long, never trusted from the cache.

Every other file is read (sha256); when that differs from the cached copy's, the file is
copied (rsync -c --files-from, the current time as its mtime, so make and ninja rebuild
what uses it) and the copy in WORK is read again for the cache. Exit 0 with the state on
stdout; 3 when rsync failed (its messages on stderr).
"""
import hashlib
import os
import subprocess
import sys


def file_sha(path):
    """'<mode>:<sha256>' of a file (rsync -p copies the mode too), or of a link's target."""
    h = hashlib.sha256()
    try:
        st = os.lstat(path)
        if os.path.islink(path):
            h.update(b'link:' + os.readlink(path))
        else:
            with open(path, 'rb') as f:
                for chunk in iter(lambda: f.read(1 << 20), b''):
                    h.update(chunk)
    except FileNotFoundError:
        return 'missing'
    return '%o:%s' % (st.st_mode, h.hexdigest())


def stat_key(st):
    return b'%d %d %d %d %d' % (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def load_cache(path):
    cache = {}
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except FileNotFoundError:
        return cache
    for rec in data.split(b'\0'):
        if not rec:
            continue
        parts = rec.split(b'\t', 2)
        if len(parts) == 3:
            cache[parts[2]] = (parts[0], parts[1])
    return cache


def main():
    if len(sys.argv) != 6:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    src, work, files, cache_path, since = sys.argv[1:6]
    since = int(since)
    with open(files, 'rb') as f:
        paths = sorted(p for p in f.read().split(b'\0') if p)
    cache = load_cache(cache_path)
    srcb = os.fsencode(src)
    workb = os.fsencode(work)
    new = {}       # path -> (stat key or b'racy', src sha)
    copy = []      # paths whose WORK copy may differ
    for p in paths:
        sp = os.path.join(srcb, p)
        try:
            st = os.lstat(sp)
        except FileNotFoundError:
            continue            # gone since the list was made: rsync skips it too
        key = stat_key(st)
        racy = st.st_ctime_ns >= since
        old = cache.get(p)
        if old is not None and not racy and old[0] == key and \
                os.path.lexists(os.path.join(workb, p)):
            new[p] = (key, old[1])
            continue
        in_work = os.path.lexists(os.path.join(workb, p))
        if old is None and not in_work:
            # A new file (a new work tree): copied, then read once, in WORK.
            new[p] = (b'racy' if racy else key, b'')
            copy.append(p)
            continue
        sha = file_sha(sp).encode()
        new[p] = (b'racy' if racy else key, sha)
        if old is None or old[1] != sha or not in_work:
            copy.append(p)
    if copy:
        lst = os.path.join(work, '.devmem-lab-copy')
        with open(lst, 'wb') as f:
            f.write(b'\0'.join(copy) + b'\0')
        # Content decides (-c), and no -t: a copied file gets the current time as its mtime.
        with open(os.path.join(work, '.devmem-lab-sync.out'), 'wb') as out, \
                open(os.path.join(work, '.devmem-lab-sync.log'), 'wb') as err:
            rc = subprocess.call(['rsync', '-rlpD', '-c', '--from0', '--files-from=' + lst,
                                  '--ignore-missing-args', '--out-format=%n',
                                  src + '/', work + '/'], stdout=out, stderr=err)
        if rc != 0:
            return 3
        # The cache records what WORK holds now (SRC may have changed since it was read).
        for p in copy:
            key, _ = new[p]
            new[p] = (key, file_sha(os.path.join(workb, p)).encode())
    else:
        open(os.path.join(work, '.devmem-lab-sync.out'), 'wb').close()
    tmp = cache_path + '.tmp'
    with open(tmp, 'wb') as f:
        for p in paths:
            if p in new:
                f.write(new[p][0] + b'\t' + new[p][1] + b'\t' + p + b'\0')
    os.replace(tmp, cache_path)
    state = hashlib.sha256()
    for p in paths:
        if p in new:
            state.update(p + b'\0' + new[p][1] + b'\0')
    print(state.hexdigest())
    return 0


if __name__ == '__main__':
    sys.exit(main())
