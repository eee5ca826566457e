#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-docs: the documentation's promises, checked (scripts/check-docs; TAP on stdout).

  check-docs.py ROOT        (TAP results, numbered from 1, without the plan: scripts/check-docs
                            adds its own tests and the plan)

Pages: README.md and every docs/**/*.md; generated pages (docs/results/latest.md) are
checked for links only, the specs (docs/**/*.rst) for run dirs, work periods and branches
only. One test per page and rule, so a failure names the page and the line.
"""
import os
import re
import subprocess
import sys

GENERATED = {'docs/results/latest.md'}
# Names of other projects' scripts and make targets that pages cite as theirs (the kernel's
# scripts/decode_stacktrace.sh, `make mrproper` in a kernel tree), not ours to check.
UPSTREAM_SCRIPTS = {'decode_stacktrace.sh', 'checkpatch.pl', 'get_maintainer.pl', 'config',
                    'kconfig', 'sign-file', 'extract-vmlinux', 'faddr2line'}
UPSTREAM_TARGETS = {'mrproper', 'modules', 'modules_install', 'headers_install',
                    'olddefconfig', 'defconfig', 'kselftest', 'kselftest-install', 'install',
                    'all', 'bzImage', 'vmlinux', 'menuconfig', 'oldconfig', 'allnoconfig'}
LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)|^\[[^\]]+\]:\s*(\S+)', re.M)
CODE_SPAN = re.compile(r'`([^`\n]+)`')
MAKE = re.compile(r'(?:^|[\s;&|(])make((?:\s+-C\s+\S+)?)((?:\s+[A-Z_]+=\S*)*)\s+([a-z][a-z0-9_-]*)\b')
SCRIPT = re.compile(r'(?<![\w/$.-])(scripts/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?)')
RUNDIR = re.compile(r'out/results/(?!<)[A-Za-z0-9][^\s`)\'",;]*|\b\d{8}T\d{6}Z\b|'
                    r'\b(?:debug|migration)-\d{8}-\d{6}\b')
PERIOD = re.compile(r'\b(?:[Ss]ession|[Ww]ork period|[Ss]print|[Pp]ause period)\s+\d+\b')
# numbered branch names: letters and two digits (pause36, linux17b), matched against the
# branch names git's merge commits record (a tree without git history checks the fixed list)
KNOWN_BRANCHES = {'pause36', 'rss35', 'tun34', 'ptp34', 'xsk34', 'shaper34', 'psp33', 'gro33',
                  'agent33', 'tx33', 'qemu29', 'linux29', 'migrate29', 'rxmisc28', 'front32',
                  'gpu20', 'harness18', 'linux17', 'linux17b', 'qemu17', 'kernel16', 'guest15'}


def git_branches(root):
    try:
        out = subprocess.run(['git', '-C', root, 'log', '--all', '--merges', '--format=%s'],
                             capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {m for m in re.findall(r"Merge branch '([^']+)'", out) if re.search(r'\d', m)}


def slug(title):
    """GitHub's anchor of a heading."""
    t = re.sub(r'`|\*\*|\[([^\]]*)\]\([^)]*\)', lambda m: m.group(1) or '', title.strip())
    t = t.lower()
    t = re.sub(r'[^\w\- ]', '', t)
    return t.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        in_code = False
        with open(path, encoding='utf-8') as f:
            for ln in f:
                if ln.startswith('```'):
                    in_code = not in_code
                    continue
                m = None if in_code else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', ln)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    out.add(s if n == 0 else f'{s}-{n}')
                for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', ln):
                    out.add(a)
        cache[path] = out
    return cache[path]


def pages(root, ext='.md'):
    out = ['README.md'] if ext == '.md' else []
    for d, dirs, files in os.walk(os.path.join(root, 'docs')):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(ext):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return out


def lines_of(root, page):
    """(lineno, text, code) of a page: code = the line is in a fenced block."""
    out, code = [], False
    with open(os.path.join(root, page), encoding='utf-8') as f:
        for n, ln in enumerate(f, 1):
            if ln.lstrip().startswith('```'):
                code = not code
                continue
            out.append((n, ln.rstrip('\n'), code))
    return out


def make_targets(root, mk):
    try:
        with open(os.path.join(root, mk), encoding='utf-8') as f:
            txt = f.read()
    except OSError:
        return None
    return set(re.findall(r'^([a-z][a-z0-9_-]*)\s*:(?!=)', txt, re.M))


class Tap:
    def __init__(self):
        self.n = 0
        self.bad = 0

    def t(self, ok, desc, why=()):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} {desc}")
        if not ok:
            self.bad += 1
            for w in list(why)[:20]:
                print(f'# {w}')


def main(root):
    tap = Tap()
    branches = KNOWN_BRANCHES | git_branches(root)
    branch_re = re.compile(r'\b(?:' + '|'.join(sorted(map(re.escape, branches), key=len,
                                                      reverse=True)) + r')\b')
    helps = {}
    for page in pages(root) + pages(root, '.rst'):
        rst = page.endswith('.rst')
        lines = lines_of(root, page)
        base = os.path.dirname(page)
        if rst:         # the specs: only what belongs to one machine or stretch of work
            no_history(tap, page, lines, branch_re)
            continue
        # 1. links
        bad = []
        for n, ln, code in lines:
            if code:
                continue
            for m in LINK.finditer(ln):
                target = m.group(1) or m.group(2)
                if re.match(r'[a-z][a-z0-9+.-]*:', target) or target.startswith('//'):
                    continue          # http:, mailto: ...
                path, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(root, base, path)) if path else \
                    os.path.join(root, page)
                if not os.path.exists(dest):
                    bad.append(f'{page}:{n}: {target}: no such file')
                elif frag and dest.endswith('.md') and frag not in anchors(dest):
                    bad.append(f'{page}:{n}: {target}: no heading "#{frag}" in '
                               f'{os.path.relpath(dest, root)}')
        tap.t(not bad, f'{page}: every relative link resolves (file and heading)', bad)
        if page in GENERATED:
            continue
        # 2. make targets and scripts named in code (spans and fenced blocks)
        bad_t, bad_s = [], []
        for n, ln, code in lines:
            for frag in ([ln] if code else CODE_SPAN.findall(ln)):
                for m in MAKE.finditer(frag):
                    cdir, tgt = m.group(1).split()[-1] if m.group(1) else '', m.group(3)
                    if tgt in UPSTREAM_TARGETS or re.search(r'\bM=|\bO=|KDIR', frag):
                        continue
                    mk = os.path.join(cdir, 'Makefile') if cdir else 'Makefile'
                    if cdir and not os.path.isdir(os.path.join(root, cdir)):
                        continue      # another tree's make (make -C /src ...)
                    tg = make_targets(root, mk)
                    if tg is None:
                        bad_t.append(f'{page}:{n}: make -C {cdir}: no {mk}')
                    elif tgt not in tg:
                        bad_t.append(f'{page}:{n}: `make {tgt}`: no such target in {mk}')
                for m in SCRIPT.finditer(frag):
                    s = m.group(1).rstrip('.')
                    name = s.split('/')[-1]
                    if name in UPSTREAM_SCRIPTS or not re.search(r'[a-z]', name) or \
                            name.isupper():
                        continue
                    p = os.path.join(root, s)
                    if not os.path.exists(p):
                        bad_s.append(f'{page}:{n}: {s}: no such file')
                    elif s.count('/') == 1 and os.path.isfile(p):
                        if not os.access(p, os.X_OK):
                            bad_s.append(f'{page}:{n}: {s}: not executable')
                            continue
                        if s not in helps:
                            try:
                                r = subprocess.run([p, '--help'], capture_output=True,
                                                   timeout=60, check=False, cwd=root)
                                helps[s] = r.returncode == 0 and r.stdout
                            except (OSError, subprocess.SubprocessError):
                                helps[s] = False
                        if not helps[s]:
                            bad_s.append(f'{page}:{n}: {s} --help: no usage (exit not 0 '
                                         'or nothing on stdout)')
        tap.t(not bad_t, f'{page}: every make target named exists', bad_t)
        tap.t(not bad_s, f'{page}: every script named exists and answers --help', bad_s)
        no_history(tap, page, lines, branch_re)
    return 1 if tap.bad else 0


def no_history(tap, page, lines, branch_re):
    """What belongs to one machine or one stretch of the team's work."""
    bad = []
    for n, ln, _ in lines:
        for rx, what in ((RUNDIR, 'a run dir of one machine'),
                         (PERIOD, 'a numbered work period'),
                         (branch_re, 'a branch name')):
            for m in rx.finditer(ln):
                if '<' in m.group(0):
                    continue      # a placeholder: out/results/<time>/
                bad.append(f'{page}:{n}: {what}: "{m.group(0)}"')
    tap.t(not bad, f'{page}: no run dir of one machine, no work period, no branch name '
          '(history is in git log; figures in docs/results/latest.md)', bad)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
