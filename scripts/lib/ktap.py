#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ktap: the one TAP/KTAP reader of devmem-lab's scripts, and the console-health check.

Every script that reads TAP or KTAP calls this module (scripts/ktap-report, scripts/check,
scripts/run-debug, scripts/bench); nothing else parses result lines. frames() also reads
ktap-report's one-document output.log (frames nested 4 spaces deep).

As a module:
  parse(lines)          -> Stream: plan, results; each Result has its diagnostics and its
                           nested subtests (KTAP's 4-space indentation and kselftest's "# "
                           prefix, to any depth) as Result.children, a Stream
  parse(lines, hashes=False) -> the same with KTAP's own rules: "# " lines are diagnostics
  judge(stream)         -> Verdict: KTAP's verdict, counted as kunit.py parse counts (crashed
                           for a short plan, a "not ok" parent of passing subtests) plus the
                           rules broken (numbering, beyond the plan, bail-out, 2 documents)
  verdict_of(lines)     -> judge(parse(lines, hashes=False))
  documents(lines)      -> [Stream]: one per "TAP version"/"KTAP version" document
  frames(lines)         -> the '# devmem-lab: begin/end PAIR TEST' frames of a guest output
  program_cases(frame)  -> the cases of one framed program (run_kselftest.sh nesting undone)
  kunit_cases(stream)   -> (suite, Result) for each case of each KUnit suite in a stream
  splat_patterns(), splats(lines) -> scripts/lib/splats.txt and the console lines it matches
  console_slices(lines) -> the console cut at the guest runner's per-test markers
  splat_blocks(lines)   -> each splat with its trace, and the test that was running
  decode(block, vmlinux) -> the block through the kernel's scripts/decode_stacktrace.sh
  junit(suites, path)   -> write JUnit XML: suites = [(name, [Result...])]
  read_known(path)      -> {(pair, test, case): Known(pattern, why)} of a known-failures
                           file (tests/guest/known-failures.txt); ValueError on a bad line
As a command (for shell callers):
  ktap.py count FILE...          print 'P F S' (passed, failed, skipped) over the files'
                                 top-level results, each failure on stderr; a file that
                                 breaks KTAP's rules (ktap.py verdict: short plan, bail-out,
                                 a failed subtest under "ok", numbering, no results) is one
                                 more failure
  ktap.py merge OUT.tap FILE...  one strict TAP stream (numbered 1..N, with its plan) of all
                                 files' top-level results, prefixed with the file's name
  ktap.py junit OUT.xml FILE...  JUnit XML, one testsuite per file, one testcase per result,
                                 failure text = the diagnostics that followed the result
  ktap.py splats LOG             print the console lines that show a kernel problem (not those
                                 of a known upstream splat, splats-known.txt); exit 0
                                 if there were any, 1 if none (like grep)
  ktap.py frame LOG PAIR TEST    print strict TAP (numbered, with a plan) of one framed
                                 program's cases in a guest output log; KUnit documents in
                                 the frame (debugfs results) become kunit.SUITE.CASE; an
                                 unfinished or missing frame and short plans are failures
  ktap.py kunit FILE [PREFIX]    print strict TAP of the KUnit cases in FILE (KTAP as
                                 kunit.py parse --raw_output=kunit extracts it from a
                                 console) as PREFIX.SUITE.CASE (default kunit); no suites,
                                 a short plan or a bail-out are failures
  ktap.py time LOG PAIR TEST     print the framed test's wall time in seconds (1 decimal)
  ktap.py tree FILE              print the parsed tree: plans, results, nested subtests
  ktap.py verdict [--kselftest] FILE
                                 print KTAP's verdict as kunit.py parse counts it:
                                 'pass|fail|skip|error passed=N failed=N crashed=N
                                 skipped=N errors=N', the broken rules on stderr; exit 0
                                 for pass/skip, 1 otherwise. --kselftest: run_kselftest.sh's
                                 "# " nesting counts (the program's cases), as ktap-report
                                 reads a program; without it "# " lines are diagnostics
  ktap.py failed FILE            exit 0 if FILE has a failure or breaks KTAP's rules (as
                                 ktap.py verdict says), 1 if not (like grep)
  ktap.py known FILE             print the known-failures file's cases as PAIR|TEST|CASE
                                 words (for the guest's run-tests); exit 1 on a bad line
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# "ok N name [# DIRECTIVE reason]": the number is optional (TAP 13); a '#' part that is not a
# SKIP/XFAIL/TODO directive is a plain comment (e.g. run_kselftest.sh's "# exit=1").
RESULT = re.compile(r'^(not ok|ok)\b(?:\s+(\d+))?(?:\s+-)?\s*([^#]*?)\s*(?:#\s*(.*?))?\s*$')
DIRECTIVE = re.compile(r'^(SKIP|XFAIL|TODO)\b\s*(.*)$', re.I)
VERSION = re.compile(r'^K?TAP version \d+')
PLAN = re.compile(r'^1\.\.(\d+)')
SUBTEST = re.compile(r'^# Subtest: (\S+)')
TIME = re.compile(r'time_ms=(\d+)')
ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RUNNER_RES = re.compile(r'^selftests: (\S+): (\S+)$')
BEGIN = re.compile(r'^# devmem-lab: begin (\S+) (\S+)')
END = re.compile(r'^# devmem-lab: end (\S+) (\S+) rc=(\d+)(?: time_ms=(\d+))?')
SETUP_FAIL = re.compile(r'^# devmem-lab: setup-net (\S+) failed:?\s*(.*)$')
NO_TEST = re.compile(r'^# devmem-lab: no such test (\S+) (\S+)')
RETRY = re.compile(r'^# devmem-lab: retry (\S+) (\S+)')
# The guest runner (images/guest/run-tests) writes these to /dev/kmsg around each test, so
# the console can be cut into per-test slices.
KBEGIN = re.compile(r'devmem-lab: begin (\S+) (\S+)')
KEND = re.compile(r'devmem-lab: end (\S+) (\S+)')
HERE = os.path.dirname(os.path.abspath(__file__))
SPLATS = os.path.join(HERE, 'splats.txt')
KNOWN_SPLATS = os.path.join(HERE, 'splats-known.txt')


def classify(ok, directive):
    """'pass', 'fail' or 'skip' for a result line's "ok"/"not ok" and its directive. XFAIL
    ("expected failure", e.g. 'Device does not support rx-gro-hw') is a skip: nothing was
    shown to work, and a skip is never counted as a pass."""
    d = (directive or '').upper()
    if d in ('SKIP', 'XFAIL'):
        return 'skip'
    return 'pass' if ok == 'ok' else 'fail'


class Result:
    """One TAP/KTAP result line, with what came before it at its level."""

    def __init__(self, ok, num, name, directive, reason, line=''):
        self.ok = ok
        self.num = num
        self.name = name
        self.directive = (directive or '').upper() or None
        self.status = classify(ok, directive)
        self.reason = reason or ''
        self.line = line
        self.diag = []          # lines at this level since the previous result
        self.children = None    # Stream of its nested subtests, if it had any
        self.time_ms = 0


class Stream:
    def __init__(self):
        self.name = None        # "# Subtest: NAME"
        self.plan = None
        self.results = []
        self.bail = None
        self.lines = []         # every line fed at this level (nested ones with their prefix)
        self.tail = []          # lines after the last result
        self.tail_children = None
        self.extra_docs = 0     # version lines after a plan or result: more documents

    def counts(self):
        c = {'pass': 0, 'fail': 0, 'skip': 0}
        for r in self.results:
            c[r.status] += 1
        return c

    def short_plan(self):
        """The plan promised more results than were seen (a program that died mid-way)."""
        return self.plan is not None and len(self.results) < self.plan


def clean(line):
    return ANSI.sub('', line.rstrip('\r\n')).rstrip('\r')


def result_of(line):
    m = RESULT.match(line)
    if not m:
        return None
    comment = (m.group(4) or '').strip()
    d = DIRECTIVE.match(comment)
    directive, reason = (d.group(1), d.group(2).strip()) if d else (None, comment)
    return Result(m.group(1), int(m.group(2) or 0), m.group(3).strip(), directive, reason, line)


def _unnest(line, hashes=True):
    """The line one nesting level down, or None. KTAP: any indentation (ktap.rst's examples
    use 2 spaces, kunit.py's output 4, some a tab; kunit.py accepts any): the line is
    returned with its indentation, which _dedent() takes off by the shallowest of its level.
    kselftest: "# " (unless hashes is False: KTAP's own rules, where "# " lines are
    diagnostics)."""
    if line[:1] in (' ', '\t') and line.strip():
        return line
    if not hashes:
        return None
    if line.startswith('# '):
        return line[2:]
    if line == '#':
        return ''
    return None


def _dedent(lines):
    """Nested lines one level down: [(indented, line)] (indented: KTAP's indentation, else
    kselftest's "# " already taken off); the shallowest indentation of the indented ones
    taken off each of them (a tab counts as one level, as 4 spaces do)."""
    ind = [len(ln) - len(ln.lstrip(' \t')) for w, ln in lines if w]
    k = min(ind) if ind else 0
    return [ln[k:] if w else ln for w, ln in lines]


def _sub(lines, hashes=True):
    s = parse(_dedent(lines), hashes)
    return s if s.results or s.plan is not None or s.bail else None


def parse(lines, hashes=True):
    """A TAP or KTAP stream. Nested lines (indented by 4 spaces or a tab, or prefixed "# " as
    run_kselftest.sh does, unless hashes is False) before a result are that result's
    subtests (Result.children) and, as they were, its diagnostics (Result.diag). A second
    version line starts a new document whose results follow on (Stream.extra_docs counts
    them; see documents() to keep them apart)."""
    s = Stream()
    pending, child = [], []
    for raw in lines:
        line = clean(raw)
        s.lines.append(line)
        m = SUBTEST.match(line)
        if m:
            s.name = s.name or m.group(1)
            pending.append(line)
            continue
        inner = _unnest(line, hashes)
        if inner is not None:
            child.append((inner is line, inner))
            pending.append(line)
            continue
        if VERSION.match(line):
            if s.results or s.plan is not None:
                s.extra_docs += 1
            pending.append(line)
            continue
        m = PLAN.match(line)
        if m and s.plan is None:
            s.plan = int(m.group(1))
            continue
        if line.startswith('Bail out!'):
            s.bail = s.bail or line
            continue
        r = result_of(line)
        if r:
            r.diag = pending
            r.children = _sub(child, hashes) if child else None
            t = TIME.search(' '.join(pending[-3:]))
            if t:
                r.time_ms = int(t.group(1))
            pending, child = [], []
            s.results.append(r)
            continue
        if line.strip():
            pending.append(line)
    s.tail = pending
    s.tail_children = _sub(child, hashes) if child else None
    return s


class Verdict:
    """KTAP's verdict on a stream, counted as the kernel's kunit.py parse counts: each test
    without subtests once (passed, failed, skipped), each subtest a plan promised and never
    printed as crashed, a parent whose result is "not ok" although every subtest passed as
    one more failure; errors: rules broken (numbers out of sequence, more results than the
    plan, no tests at all, a bail-out, a second document)."""

    def __init__(self):
        self.passed = self.failed = self.crashed = self.skipped = self.errors = 0
        self.problems = []

    def total(self):
        return self.passed + self.failed + self.crashed + self.skipped

    def add(self, other):
        for k in ('passed', 'failed', 'crashed', 'skipped', 'errors'):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.problems += other.problems

    def add_status(self, status):
        if status == 'pass':
            self.passed += 1
        elif status == 'skip':
            self.skipped += 1
        else:
            self.failed += 1

    def error(self, what):
        self.errors += 1
        self.problems.append(what)

    @property
    def verdict(self):
        """fail (a test failed or crashed), error (no test failed, but the document broke a
        rule or ran nothing), pass, or skip (only skips)."""
        if self.failed or self.crashed:
            return 'fail'
        if self.errors or not self.total():
            return 'error'
        return 'pass' if self.passed else 'skip'

    def summary(self):
        return (f'{self.verdict} passed={self.passed} failed={self.failed} '
                f'crashed={self.crashed} skipped={self.skipped} errors={self.errors}')


def judge(stream, where='', top=True):
    """The Verdict of a parsed Stream (parse(lines, hashes=False) for KTAP's own rules; with
    kselftest's "# " nesting the program's cases count too)."""
    v = Verdict()
    at = f'{where}: ' if where else ''
    for i, r in enumerate(stream.results, 1):
        name = r.name or f'#{r.num}'
        if r.num != i:
            v.error(f'{at}result "{name}" is numbered {r.num}, expected {i}')
        if stream.plan is not None and i > stream.plan:
            v.error(f'{at}result {i} "{name}" is beyond the plan 1..{stream.plan}')
        sub = judge(r.children, (where + '.' if where else '') + name, False) \
            if r.children else None
        if sub is None or not sub.total():
            if sub is not None:
                v.errors += sub.errors
                v.problems += sub.problems
            v.add_status(r.status)
            continue
        v.add(sub)
        if r.status == 'fail' and not (sub.failed or sub.crashed):
            v.failed += 1           # "not ok" parent of passing subtests
    if stream.plan is not None and len(stream.results) < stream.plan:
        n = stream.plan - len(stream.results)
        v.crashed += n
        v.errors += n
        v.problems.append(f'{at}plan 1..{stream.plan} but {len(stream.results)} results')
    if stream.bail:
        v.error(f'{at}{stream.bail}')
        if not (v.failed or v.crashed):
            v.failed += 1           # a bail-out is the program giving up: a failure
    if stream.extra_docs:
        v.error(f'{at}{stream.extra_docs + 1} documents in one stream (version line after '
                'a plan or result)')
    if top and not stream.results and not v.crashed:
        v.error('no test results')
    return v


def verdict_of(lines, hashes=False):
    """The Verdict of a whole file's lines (KTAP's rules unless hashes)."""
    return judge(parse(lines, hashes))


def documents(lines):
    """One Stream per TAP/KTAP document: a version line at the top level after a plan or a
    result starts the next one."""
    docs, cur, seen = [], [], False
    for raw in lines:
        line = clean(raw)
        if VERSION.match(line) and seen:
            docs.append(parse(cur))
            cur, seen = [], False
        cur.append(line)
        if PLAN.match(line) or RESULT.match(line):
            seen = True
    if cur:
        docs.append(parse(cur))
    return docs


def leaves(stream, prefix=''):
    """(dotted name, Result) of every innermost result; a parent that failed without a
    failed child is kept too (a suite whose init failed)."""
    out = []
    for r in stream.results:
        name = prefix + (r.name or f'#{r.num}')
        kids = leaves(r.children, name + '.') if r.children else []
        out += kids
        if not kids or (r.status == 'fail' and all(k.status != 'fail' for _, k in kids)):
            out.append((name, r))
    return out


def kunit_cases(stream):
    """(suite, case Result) for each KUnit suite (a result with nested cases) in stream.
    Parameterised cases keep their parameters as the case's children (not counted)."""
    for r in stream.results:
        if r.children and r.children.results:
            for c in r.children.results:
                yield (r.children.name or r.name, c)


def strip_stamps(lines):
    return [STAMP.sub('', clean(ln)) for ln in lines]


class Frame:
    """One test the guest runner framed with begin/end comments in output.log."""

    def __init__(self, pair, test):
        self.pair, self.test = pair, test
        self.body = []
        self.rc = None          # None: no end line (unfinished)
        self.ms = 0
        self.why = ''           # for unfinished frames
        self.attempt = 1        # 2: the guest's retry of a failed program ('retry' line)
        self.retry_line = ''    # that '# devmem-lab: retry' line
        self.begin = self.end = ''
        self.bad = []           # control lines that break the frame (a forged or lost one)


def frames(lines):
    """(frames, setup_failed {pair: reason}, not_installed {(pair, test)}) of a guest output
    log: the '# devmem-lab: begin PAIR TEST' ... 'end PAIR TEST rc=N time_ms=M' frames.
    The guest's run-tests writes every control line itself and rewrites any line of a
    program's output that looks like one ('# [out] ...'), so a control line where it cannot
    be is a frame broken (Frame.bad, a failure of that program, never a pass): a begin
    inside an open frame, an end that names another program, a second end of a frame."""
    out, setup_failed, not_installed = [], {}, set()
    cur = retry = None
    pad = ''
    last = {}       # (pair, test) -> its latest finished frame
    stray = []      # lines outside every frame since the last end
    for raw in lines:
        line = clean(raw)
        # ktap-report's one-document output.log nests each frame 4 spaces deep: undo it.
        if pad and line.startswith(pad):
            line = line[len(pad):]
        elif line.startswith(' ') and BEGIN.match(line.lstrip()):
            pad = line[:len(line) - len(line.lstrip())]
            line = line.lstrip()
        m = SETUP_FAIL.match(line)
        if m:
            setup_failed[m.group(1)] = m.group(2) or 'setup-net failed'
            continue
        m = NO_TEST.match(line)
        if m:
            not_installed.add((m.group(1), m.group(2)))
            continue
        m = RETRY.match(line)
        if m:
            retry = (m.group(1), m.group(2), line)
            continue
        m = BEGIN.match(line)
        if m:
            if cur:
                # run-tests ends every frame it begins (rc=125 when the runner's output
                # ended): a begin inside a frame is not its own
                cur.bad.append(f'a begin line inside its frame: {line[:120]}')
                cur.body.append(line)
                continue
            cur = Frame(m.group(1), m.group(2))
            cur.begin = line
            stray = []
            if retry and retry[:2] == (cur.pair, cur.test):
                cur.attempt, cur.retry_line = 2, retry[2]
            retry = None
            continue
        m = END.match(line)
        if m and cur and (m.group(1), m.group(2)) != (cur.pair, cur.test):
            cur.bad.append(f'an end line that does not name its frame: {line[:120]}')
            cur.body.append(line)
            continue
        if m and cur:
            cur.rc, cur.ms = int(m.group(3)), int(m.group(4) or 0)
            cur.end = line
            out.append(cur)
            last[(cur.pair, cur.test)] = cur
            cur = None
            continue
        if m:
            prev = last.get((m.group(1), m.group(2)))
            if prev is not None:
                # the frame had ended already: the first end was not run-tests' own
                prev.bad.append(f'ended twice (an end line after its end: {line[:120]}); '
                                f'the first end ({prev.end[:80]}) was not the runner\'s')
                prev.rc = max(prev.rc or 0, int(m.group(3))) or 1
                prev.body += stray
                prev.end = line
            stray = []
            continue
        if cur:
            cur.body.append(line)
        else:
            stray.append(line)
    if cur:
        cur.why = 'the guest stopped during this test (hung, crashed or timed out)'
        out.append(cur)
    return out, setup_failed, not_installed


def program_cases(frame):
    """(cases Stream, the runner's result or None) of a finished frame: run_kselftest.sh's
    "ok N selftests: DIR: PROG" result's nested KTAP, or the frame's own top-level results
    when the program printed un-nested KTAP (tests/guest/smoke.sh)."""
    s = parse(frame.body)
    for r in s.results:
        if RUNNER_RES.match(r.name):
            return (r.children or Stream()), r
    return s, None


def program_lines(frame):
    """The program's own output lines of a frame (the runner's "# " prefix removed)."""
    if any(ln.startswith('# selftests: ') for ln in frame.body):
        return [ln[2:] if ln.startswith('# ') else ('' if ln == '#' else ln)
                for ln in frame.body if not RESULT.match(ln)]
    return list(frame.body)


def splat_patterns(path=SPLATS):
    with open(path) as f:
        pats = [ln.rstrip('\n') for ln in f if ln.strip() and not ln.startswith('#')]
    return re.compile('|'.join(f'(?:{p})' for p in pats))


def splats(lines, rx=None):
    rx = rx or splat_patterns()
    return [ln.rstrip('\n') for ln in lines if rx.search(ln)]


# A block runs to its '---[ end trace' up to this many lines: a known splat's trace (57
# lines for udmabuf's under KASAN) must not spill into a second, unknown-looking block.
SPLAT_MAX_LINES = 200


def known_splats(path=KNOWN_SPLATS):
    """The known upstream splats (scripts/lib/splats-known.txt): fixed strings."""
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith('#')]


def known_splat(block, known, rx=None):
    """The known-list entry a splat block contains, or None. A block with a second report's
    title after its trace began is never excused (splat_blocks cuts there, so this is the
    belt to its braces)."""
    rx = rx or splat_patterns()
    titles, traced = 0, False
    for ln in block:
        if is_title(ln, rx) and traced:
            return None
        titles += is_title(ln, rx)
        traced = traced or (titles and bool(TRACE.search(STAMP.sub('', ln))))
    for k in known:
        if any(k in ln for ln in block):
            return k
    return None


# (DEVMEM_LAB_SPLATS_ALLOWED: another file, for tests/harness)
ALLOWED_SPLATS = os.environ.get('DEVMEM_LAB_SPLATS_ALLOWED') or os.path.join(HERE, 'splats-allowed.txt')


def allowed_splats(path=ALLOWED_SPLATS):
    """[(program regex, splat regex, why)] of scripts/lib/splats-allowed.txt: what a fault-
    injection program causes on purpose (a TX timeout it provokes), allowed in its own
    console slice only."""
    out = []
    try:
        f = open(path)
    except FileNotFoundError:
        return out
    with f:
        for n, line in enumerate(f, 1):
            body, _, why = line.rstrip('\n').partition(' # ')
            if not body.strip() or body.lstrip().startswith('#'):
                continue
            parts = body.split(None, 1)
            if len(parts) != 2:
                raise ValueError(f'{path}:{n}: want "PROGRAM-REGEX SPLAT-REGEX  # why"')
            out.append((re.compile(parts[0]), re.compile(parts[1].strip()), why.strip()))
    return out


def allowed_splat(key, block, allowed, rx=None):
    """The reason a splat block in the console slice of key (pair, test) is allowed, or None:
    an entry whose program regex matches the test (DIR:PROG or PROG, whole) and whose splat
    regex matches every title line of the block."""
    if not key:
        return None
    rx = rx or splat_patterns()
    titles = [ln for ln in block if is_title(ln, rx)]
    test = key[1]
    for prx, srx, why in allowed:
        if (prx.fullmatch(test) or prx.fullmatch(test.split(':', 1)[-1])) and titles and \
                all(srx.search(t) for t in titles):
            return why or f'allowed for {test} ({srx.pattern})'
    return None


def unknown_splats(lines, rx=None, known=None, allowed=None):
    """(matching lines of the splat blocks no known entry names and no program is allowed,
    count of known or allowed blocks)."""
    rx = rx or splat_patterns()
    known = known_splats() if known is None else known
    allowed = allowed_splats() if allowed is None else allowed
    hits, nknown = [], 0
    for key, block in splat_blocks(lines, rx, max_lines=SPLAT_MAX_LINES):
        if known_splat(block, known, rx) or allowed_splat(key, block, allowed, rx):
            nknown += 1
        else:
            hits += [ln for ln in block if rx.search(ln)]
    return hits, nknown


def console_slices(lines):
    """[(key, lines)]: the console cut at the runner's kmsg markers; key is (pair, test) for
    a test's slice, None for what came before, between and after tests."""
    out, cur, key = [], [], None
    for raw in lines:
        line = clean(raw)
        m = KBEGIN.search(line)
        if m and STAMP.sub('', line).startswith('devmem-lab: begin'):
            out.append((key, cur))
            cur, key = [line], (m.group(1), m.group(2))
            continue
        cur.append(line)
        m = KEND.search(line)
        if m and key and STAMP.sub('', line).startswith('devmem-lab: end'):
            out.append((key, cur))
            cur, key = [], None
    out.append((key, cur))
    return [(k, ls) for k, ls in out if ls]


BLOCK_END = re.compile(r'---\[ end trace|Kernel Offset:|---\[ end Kernel panic')
CUT = '------------[ cut here ]------------'
# KASAN's and UBSAN's reports (no cut line, no end trace) open and close with a line of '='.
RULE = re.compile(r'^={20,}\s*$')
# A line of a splat's trace: after one, a new title line is a new report.
TRACE = re.compile(r'Call Trace:|RIP:|</TASK>|</IRQ>|^\s*\S+\+0x[0-9a-f]+/0x[0-9a-f]+')


GENERIC = re.compile(r'Call Trace:|RIP:|Code:')


def is_title(line, rx):
    """A line that names a report (a splat line that is not a trace's generic one)."""
    return bool(rx.search(line)) and not GENERIC.search(line)


def splat_blocks(lines, rx=None, max_lines=60, context=6):
    """[(key, block lines)]: each splat with the trace that follows it, and the test whose
    console slice it is in (key as in console_slices). A block starts at '[ cut here ]' or
    at the first matching line (with up to `context` lines before it: "NMI backtrace for
    cpu 1", "CPU: ... Comm: ...", KASAN's opening '=' line), and runs to '---[ end trace',
    KASAN's or UBSAN's closing '=' line, the next '[ cut here ]', the next report's title
    once its own trace has begun, the end of the slice or max_lines."""
    rx = rx or splat_patterns()
    out = []
    for key, sl in console_slices(lines):
        i = done = 0
        while i < len(sl):
            ln = sl[i]
            if CUT in ln or rx.search(ln):
                start = i if CUT in ln else max(done, i - context,
                                                1 if key else 0)  # not the begin marker
                j, block = i, sl[start:i]
                traced = titled = False
                while j < len(sl) and len(block) < max_lines:
                    cur = sl[j]
                    bare = STAMP.sub('', cur)
                    if block and is_title(cur, rx) and (traced or
                                                        (titled and RULE.match(STAMP.sub('', block[-1])))):
                        break           # the next report: its own block
                    block.append(cur)
                    j += 1
                    titled = titled or is_title(cur, rx)
                    traced = traced or (titled and bool(TRACE.search(bare)))
                    if BLOCK_END.search(cur):
                        break
                    if titled and RULE.match(bare) and j - 1 > i:
                        break           # KASAN/UBSAN's closing line
                    if j < len(sl) and CUT in sl[j]:
                        break
                if any(rx.search(b) for b in block):
                    out.append((key, block))
                i = done = max(j, i + 1)
                continue
            i += 1
    return out


def splat_title(block, rx=None):
    """The line that names a splat: its first matching line that is not a generic one (Call
    Trace:, RIP:), else the block's first line; without the timestamp."""
    rx = rx or splat_patterns()
    hit = [b for b in block if rx.search(b) and not GENERIC.search(b)]
    return STAMP.sub('', (hit or block)[0]).strip()


def decode(block, vmlinux, timeout=120):
    """The block decoded by scripts/decode_stacktrace.sh of the tree vmlinux was built from
    (its build dir's 'source' link), base path 'auto': file:line per frame, relative to the
    tree. None if there is no vmlinux or the script fails."""
    if not vmlinux or not os.path.isfile(vmlinux):
        return None
    bdir = os.path.dirname(os.path.abspath(vmlinux))
    src = os.path.realpath(os.path.join(bdir, 'source'))
    if not os.path.isdir(src):
        src = bdir
    tool = os.path.join(src, 'scripts', 'decode_stacktrace.sh')
    if not os.path.isfile(tool):
        return None
    try:
        p = subprocess.run(['bash', tool, vmlinux, 'auto'], input='\n'.join(block) + '\n',
                           capture_output=True, text=True, timeout=timeout, cwd=bdir)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode or not p.stdout.strip():
        return None
    return p.stdout.rstrip('\n').splitlines()


# C0 controls but tab and newline (and DEL): not allowed in XML 1.0, odd in a KTAP document.
CONTROL = re.compile(r'[\x00-\x08\x0b-\x1f\x7f]')


def escape(text):
    """Text with control bytes shown as \\xNN (valid XML, readable KTAP)."""
    return CONTROL.sub(lambda m: f'\\x{ord(m.group(0)):02x}', text)


def junit(suites, path, title='devmem-lab'):
    """JUnit XML of TAP results (scripts/check's junit.xml); control bytes escaped."""
    root = ET.Element('testsuites', name=escape(title))
    for name, results in suites:
        name = escape(name)
        ts = ET.SubElement(root, 'testsuite', name=name, tests=str(len(results)),
                           failures=str(sum(r.status == 'fail' for r in results)),
                           skipped=str(sum(r.status == 'skip' for r in results)),
                           time=f'{sum(r.time_ms for r in results) / 1000:.3f}')
        for r in results:
            tc = ET.SubElement(ts, 'testcase', classname=name, name=escape(r.name or f'#{r.num}'),
                               time=f'{r.time_ms / 1000:.3f}')
            text = escape('\n'.join(r.diag[-60:]))
            if r.status == 'fail':
                f = ET.SubElement(tc, 'failure', message=escape(
                    r.reason or (r.diag[-1].strip('# ') if r.diag else 'failed')))
                f.text = text
            elif r.status == 'skip':
                ET.SubElement(tc, 'skipped', message=escape(r.reason))
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
    r = Result('not ok', len(s.results) + 1, f'{name}: plan', None, '')
    r.reason = f'plan 1..{s.plan} but {len(s.results)} results'
    return r


def frame_tap(path, pair, test):
    """Strict TAP lines of one framed program (the 'frame' command)."""
    try:
        with open(path, errors='replace', newline='\n') as f:
            fr = [x for x in frames(f)[0] if (x.pair, x.test) == (pair, test)]
    except FileNotFoundError:
        fr = []
    res = []
    if not fr:
        res.append(('not ok', f'{test}: no output from the guest (no begin/end frame)', ''))
    for x in fr:
        if x.rc is None:
            res.append(('not ok', f'{test}: {x.why}', ''))
            continue
        for d in documents(x.body):
            kunit = list(kunit_cases(d)) if d.name is None and any(
                r.children and r.children.name for r in d.results) else []
            short = []
            if kunit:
                cases = [(f'kunit.{s}.{c.name}', c) for s, c in kunit]
                short = [('not ok', f'kunit.{r.name}: plan 1..{r.children.plan} but '
                          f'{len(r.children.results)} results', '')
                         for r in d.results if r.children and r.children.short_plan()]
            else:
                cases = [(r.name, r) for r in d.results]
            for name, r in cases:
                word = 'not ok' if r.status == 'fail' else 'ok'
                dr = f' # SKIP {r.reason}'.rstrip() if r.status == 'skip' else ''
                res.append((word, name, dr))
                if r.status == 'fail':
                    res.append(('#', '\n'.join('# ' + ln for ln in r.diag[-20:]), ''))
            res += short
            if d.short_plan() or d.bail:
                res.append(('not ok', d.bail or f'{test}: plan 1..{d.plan} but '
                            f'{len(d.results)} results', ''))
        if x.rc not in (0, 4) and all(w != 'not ok' for w, _, _ in res):
            res.append(('not ok', f'{test}: exit status {x.rc}', ''))
    out, n = ['TAP version 13'], 0
    for word, name, dr in res:
        if word == '#':
            if name:
                out.append(name)
            continue
        n += 1
        out.append(f'{word} {n} {name}{dr}')
    out.insert(1, f'1..{n}')
    return out


def kunit_tap(path, prefix='kunit'):
    """Strict TAP lines of the KUnit cases of one KTAP document (the 'kunit' command)."""
    try:
        with open(path, errors='replace') as f:
            d = parse(f, hashes=False)
    except FileNotFoundError:
        d = None
    res = []
    cases = list(kunit_cases(d)) if d else []
    if not cases:
        res.append(('not ok', f'{prefix}: no KUnit suite in {path}', ''))
    for suite, c in cases:
        dr = f' # SKIP {c.reason}'.rstrip() if c.status == 'skip' else ''
        res.append(('not ok' if c.status == 'fail' else 'ok', f'{prefix}.{suite}.{c.name}', dr))
    for r in d.results if d else []:
        if r.children and r.children.short_plan():
            res.append(('not ok', f'{prefix}.{r.name}: plan 1..{r.children.plan} but '
                        f'{len(r.children.results)} results', ''))
        elif not r.children and r.status == 'fail':
            res.append(('not ok', f'{prefix}.{r.name}: failed without cases', ''))
    if d and (d.short_plan() or d.bail):
        res.append(('not ok', d.bail or f'{prefix}: plan 1..{d.plan} but {len(d.results)} '
                    'suites', ''))
    out = ['TAP version 13', f'1..{len(res)}']
    out += [f'{w} {i} {name}{dr}' for i, (w, name, dr) in enumerate(res, 1)]
    return out


def tree(stream, depth=0):
    """Lines showing a parsed stream: its plan, each result and, indented, its subtests."""
    pad = '  ' * depth
    plan = f'1..{stream.plan}' if stream.plan is not None else 'none'
    out = [f'{pad}plan {plan}' + (f' (short: {len(stream.results)} results)'
                                  if stream.short_plan() else '') +
           (f' subtest {stream.name}' if stream.name else '')]
    for r in stream.results:
        d = f' [{r.directive}]' if r.directive else ''
        out.append(f'{pad}{r.status.upper()} {r.num} {r.name}{d}'
                   + (f' ({r.reason})' if r.reason else ''))
        if r.children:
            out += tree(r.children, depth + 1)
    return out


KNOWN_LINE = re.compile(r'^\s*(\S+)\s+(\S+)\s+(\S+)\s+/((?:[^/\\]|\\.)+)/\s*(?:#\s*(.*?))?\s*$')


class Known:
    """One known failure: its case, the pattern its failure text must match, and why."""

    def __init__(self, pattern, why):
        self.rx = re.compile(pattern)
        self.pattern, self.why = pattern, why

    def explains(self, texts):
        """Whether every failure line of a case (its reason and each 'Check failed' line:
        a second check failing for another reason is another failure) matches the pattern,
        and there is at least one."""
        texts = [t for t in texts if t and t.strip()]
        return bool(texts) and all(self.rx.search(t) for t in texts)


def read_known(path):
    """The known-failures file: "PAIR TEST CASE  /REGEX/  # reason" a line (blank and
    comment-only lines skipped) -> {(pair, test, case): Known}. REGEX (Python syntax, '/'
    written '\\/') is what the case's failure text must match to be that known failure;
    any other failure of the case is a failure. ValueError names a malformed line (also one
    without a pattern: the case name alone would excuse every failure of the case)."""
    listed = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.split('#', 1)[0].strip():
                continue
            m = KNOWN_LINE.match(line.rstrip('\n'))
            if not m:
                raise ValueError(f'{path}:{n}: want "PAIR TEST CASE  /REGEX/  # reason" (the '
                                 f'failure text the case must fail with): {line.strip()}')
            try:
                listed[m.group(1, 2, 3)] = Known(m.group(4).replace('\\/', '/'), m.group(5) or '')
            except re.error as e:
                raise ValueError(f'{path}:{n}: bad pattern /{m.group(4)}/: {e}') from None
    return listed


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    cmd, args = argv[1], argv[2:]
    if cmd == 'count':
        p = f = k = 0
        for path in args:
            # KTAP's rules ("# " lines are diagnostics: a failed test's output shown that
            # way is not read as results); top-level results counted.
            with open(path, errors='replace') as fh:
                s = parse(fh, hashes=False)
            for r in s.results:
                if r.status == 'fail':
                    print(f'  FAIL: {os.path.basename(path)}: {r.name} {r.reason}'.rstrip(),
                          file=sys.stderr)
            c = s.counts()
            p, f, k = p + c['pass'], f + c['fail'], k + c['skip']
            v = judge(s)
            if v.verdict in ('fail', 'error') and not c['fail'] or s.short_plan() or s.bail:
                # a short plan, a bail-out, a failed subtest under an "ok", numbers out
                # of sequence, a second document, no results at all: one more failure
                print(f'  FAIL: {path}: ' + '; '.join(v.problems[:3] or ['a subtest failed']),
                      file=sys.stderr)
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
                hits, _ = unknown_splats(f.read().splitlines())
        except FileNotFoundError:
            return 1
        for h in hits[:20]:
            print(h)
        return 0 if hits else 1
    if cmd == 'failed' and len(args) == 1:
        try:
            with open(args[0], errors='replace') as fh:
                v = verdict_of(fh)
        except FileNotFoundError:
            return 1
        return 0 if v.verdict in ('fail', 'error') else 1
    if cmd == 'verdict' and args and len(args) <= 2 and args[-1] != '--kselftest':
        hashes = args[0] == '--kselftest'
        if hashes:
            args = args[1:]
        v = verdict_of(open(args[0], errors='replace'), hashes)
        print(v.summary())
        for p in v.problems[:20]:
            print(f'  {p}', file=sys.stderr)
        return {'pass': 0, 'skip': 0}.get(v.verdict, 1)
    if cmd == 'tree' and len(args) == 1:
        print('\n'.join(tree(_read(args[0]))))
        return 0
    if cmd == 'frame' and len(args) == 3:
        print('\n'.join(frame_tap(*args)))
        return 0
    if cmd == 'kunit' and 1 <= len(args) <= 2:
        print('\n'.join(kunit_tap(*args)))
        return 0
    if cmd == 'time' and len(args) == 3:
        try:
            with open(args[0], errors='replace', newline='\n') as f:
                fr = [x for x in frames(f)[0] if (x.pair, x.test) == tuple(args[1:])
                      and x.rc is not None]
        except FileNotFoundError:
            fr = []
        if not fr:
            return 1
        print(f'{fr[0].ms / 1000:.1f}')
        return 0
    if cmd == 'known' and len(args) == 1:
        try:
            print(' '.join('|'.join(k) for k in read_known(args[0])))
        except ValueError as e:
            print(f'ktap.py: {e}', file=sys.stderr)
            return 1
        return 0
    print(f'ktap.py: bad command line {argv[1:]} (see --help)', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
