#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ktap: the one TAP/KTAP reader of devmem-lab's scripts, and the console-health check.

As a module:
  parse(lines)          -> Stream: plan, top-level results, diagnostics per result
  splat_patterns()      -> the compiled scripts/lib/splats.txt patterns
  splats(lines)         -> the console lines that match them
  junit(suites, path)   -> write JUnit XML: suites = [(name, [Result...])]
As a command (used by scripts/check and others):
  ktap.py count FILE...          print 'P F S' (passed, failed, skipped) over the files,
                                 and each failure on stderr; a short plan counts as a failure
  ktap.py merge OUT.tap FILE...  one strict TAP stream (numbered 1..N, with its plan) of all
                                 files' top-level results, prefixed with the file's name
  ktap.py junit OUT.xml FILE...  JUnit XML, one testsuite per file, one testcase per result,
                                 failure text = the diagnostics that followed the result
  ktap.py splats LOG             print the console lines that show a kernel problem; exit 0
                                 if there were any, 1 if none (like grep)
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

RESULT = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s+)?([^#]*?)\s*(?:#\s*(\w+)\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)')
TIME = re.compile(r'time_ms=(\d+)')
ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
SPLATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'splats.txt')


def classify(ok, directive):
    """'pass', 'fail' or 'skip' for a result line's "ok"/"not ok" and its directive. XFAIL
    ("expected failure", e.g. 'Device does not support rx-gro-hw') is a skip: nothing was
    shown to work, and a skip is never counted as a pass. scripts/ktap-report uses it too."""
    d = (directive or '').upper()
    if d in ('SKIP', 'XFAIL'):
        return 'skip'
    return 'pass' if ok == 'ok' else 'fail'


class Result:
    """One top-level TAP/KTAP result."""

    def __init__(self, ok, num, name, directive, reason):
        self.num = num
        self.name = name
        self.status = classify(ok, directive)
        self.reason = reason or ''
        self.diag = []          # '#' lines and indented output after the previous result
        self.time_ms = 0


class Stream:
    def __init__(self):
        self.plan = None
        self.results = []
        self.bail = None

    def counts(self):
        c = {'pass': 0, 'fail': 0, 'skip': 0}
        for r in self.results:
            c[r.status] += 1
        return c

    def short_plan(self):
        """The plan promised more results than were seen (a program that died mid-way)."""
        return self.plan is not None and len(self.results) < self.plan


def parse(lines):
    """Top-level results of a TAP or KTAP stream (nested subtests are indented and skipped;
    their lines become diagnostics of the parent's result)."""
    s = Stream()
    pending = []
    for raw in lines:
        line = ANSI.sub('', raw.rstrip('\n'))
        if line.startswith(('TAP version', 'KTAP version')):
            continue
        m = PLAN.match(line)
        if m and s.plan is None:
            s.plan = int(m.group(1))
            continue
        if line.startswith('Bail out!'):
            s.bail = line
            continue
        m = RESULT.match(line)
        if m:
            r = Result(m.group(1), int(m.group(2) or 0), m.group(3).strip(), m.group(4),
                       (m.group(5) or '').strip())
            r.diag = pending
            t = TIME.search(' '.join(pending[-3:]))
            if t:
                r.time_ms = int(t.group(1))
            pending = []
            s.results.append(r)
            continue
        if line.strip():
            pending.append(line)
    return s


def splat_patterns(path=SPLATS):
    with open(path) as f:
        pats = [ln.rstrip('\n') for ln in f if ln.strip() and not ln.startswith('#')]
    return re.compile('|'.join(f'(?:{p})' for p in pats))


def splats(lines, rx=None):
    rx = rx or splat_patterns()
    return [ln.rstrip('\n') for ln in lines if rx.search(ln)]


def junit(suites, path, title='devmem-lab'):
    root = ET.Element('testsuites', name=title)
    for name, results in suites:
        ts = ET.SubElement(root, 'testsuite', name=name, tests=str(len(results)),
                           failures=str(sum(r.status == 'fail' for r in results)),
                           skipped=str(sum(r.status == 'skip' for r in results)),
                           time=f'{sum(r.time_ms for r in results) / 1000:.3f}')
        for r in results:
            tc = ET.SubElement(ts, 'testcase', classname=name, name=r.name or f'#{r.num}',
                               time=f'{r.time_ms / 1000:.3f}')
            text = '\n'.join(r.diag[-60:])
            if r.status == 'fail':
                f = ET.SubElement(tc, 'failure', message=r.reason or (r.diag[-1].strip('# ')
                                                                      if r.diag else 'failed'))
                f.text = text
            elif r.status == 'skip':
                ET.SubElement(tc, 'skipped', message=r.reason)
            if text and r.status != 'fail':
                ET.SubElement(tc, 'system-out').text = text
    ET.indent(root)
    tmp = path + '.tmp'
    ET.ElementTree(root).write(tmp, encoding='utf-8', xml_declaration=True)
    os.replace(tmp, path)


def _read(path):
    with open(path, errors='replace') as f:
        return parse(f)


def _short_plan_result(name, s):
    r = Result('not ok', len(s.results) + 1, f'{name}: plan',
               None, '')
    r.reason = f'plan 1..{s.plan} but {len(s.results)} results'
    return r


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    cmd, args = argv[1], argv[2:]
    if cmd == 'count':
        p = f = k = 0
        for path in args:
            s = _read(path)
            for r in s.results:
                if r.status == 'fail':
                    print(f'  FAIL: {os.path.basename(path)}: {r.name} {r.reason}'.rstrip(),
                          file=sys.stderr)
            c = s.counts()
            p, f, k = p + c['pass'], f + c['fail'], k + c['skip']
            if s.short_plan() or s.bail:
                print(f'  FAIL: {path}: ' + (s.bail or
                      f'plan 1..{s.plan} but {len(s.results)} results'), file=sys.stderr)
                f += 1
        print(p, f, k)
        return 0
    if cmd in ('merge', 'junit') and len(args) >= 2:
        out, files = args[0], args[1:]
        suites = []
        for path in files:
            s = _read(path)
            rs = list(s.results)
            name = os.path.splitext(os.path.basename(path))[0]
            if s.short_plan() or s.bail:
                rs.append(_short_plan_result(name, s))
            suites.append((name, rs))
        if cmd == 'junit':
            junit(suites, out)
            return 0
        lines, n = [], 0
        for name, rs in suites:
            for r in rs:
                n += 1
                word = 'ok' if r.status != 'fail' else 'not ok'
                d = ' # SKIP ' + r.reason if r.status == 'skip' else ''
                lines.append(f'{word} {n} {name}: {r.name}{d}'.rstrip())
        with open(out + '.tmp', 'w') as f:
            f.write('TAP version 13\n' + f'1..{n}\n' + '\n'.join(lines) + '\n')
        os.replace(out + '.tmp', out)
        return 0
    if cmd == 'splats' and len(args) == 1:
        try:
            with open(args[0], errors='replace') as f:
                hits = splats(f)
        except FileNotFoundError:
            return 1
        for h in hits[:20]:
            print(h)
        return 0 if hits else 1
    print(f'ktap.py: bad command line {argv[1:]} (see --help)', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
