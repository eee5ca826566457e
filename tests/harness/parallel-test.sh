# SPDX-License-Identifier: GPL-2.0-or-later
# parallel-test.sh: the harness's tests of parallel guests, shards and the run's ends (issues
# 26 and 27), sourced by tests/harness/harness-test (its t/rc_is/says helpers, $TMP, $ROOT).
# No boot: scripts/run-selftests with stand-ins for run-vm that speak the job queue's
# protocol (fixtures/fake-queue-run-vm) and a fake kselftest tree.

PT=$TMP/par
mkdir -p "$PT"
par_env() {
    DEVMEM_LAB_BUILD=$PT/build DEVMEM_LAB_OUT=$PT/out DEVMEM_LAB_CACHE=$PT/cache DEVMEM_LAB_BOOT_STAGGER=0 \
        DEVMEM_LAB_RUN_VM=${RUN_VM:-$ROOT/tests/harness/fixtures/fake-queue-run-vm} \
        DEVMEM_LAB_PCAP_MAXLEN=0 FAKE_SLEEP=${FAKE_SLEEP:-0.1} "$@"
}
PKS=$(DEVMEM_LAB_BUILD=$PT/build "$ROOT/scripts/build-selftests" --print-dir)
mkdir -p "$PKS/drivers/net/hw"
PTESTS="drivers/net:a.py drivers/net:b.py drivers/net:c.py drivers/net/hw:d.py drivers/net/hw:e.py devmem-lab:dbg-x"
printf '%s\n' $PTESTS devmem-lab:dbg-y >"$PKS/kselftest-list.txt"
prun() {   # prun OUTDIR [run-selftests options]: the six programs on the devmem pair
    local out=$1
    shift
    par_env "$ROOT/scripts/run-selftests" --pairs devmem --tests "$PTESTS" --no-expect \
        --no-known --out "$out" "$@"
}
# summary_rows DIR: the report's result rows (test, case, verdict), without times or paths.
summary_rows() { grep -E '^(drivers|devmem-lab:)' "$1/summary.txt" | sed 's/  */ /g' | sort; }

export -f par_env prun summary_rows
export PT PTESTS PKS ROOT
t "parallel: 3 guests run every program once; each guest's log in guest-K/" \
    bash -c '"$@" >/dev/null 2>&1; [ "$(cut -f4 "$PT/j3/jobs.tsv" | sort | uniq -c | tr -s " ")" = " 6 done" ] &&
        [ -s "$PT/j3/guest-1/output.log" ] && [ -f "$PT/j3/guest-3/rc" ] ||
        { cat "$PT/j3/jobs.tsv"; false; }' _ prun "$PT/j3" --jobs 3
t "parallel: --jobs 1 and --jobs 3 give the same results, in the list's order" \
    bash -c 'prun "$PT/j1" --jobs 1 >/dev/null 2>&1; prun "$PT/j3b" --jobs 3 >/dev/null 2>&1
        diff <(summary_rows "$PT/j1") <(summary_rows "$PT/j3b") && [ -n "$(summary_rows "$PT/j1")" ]'
t "parallel: the destructive program (devmem-lab:) is the last its guest runs" \
    bash -c 'g=$(awk -F"\t" "\$2 == \"devmem-lab:dbg-x\" { print \$3 }" "$PT/j3/jobs.tsv")
        [ -n "$g" ] && [ "$(grep "^# devmem-lab: begin" "$PT/j3/guest-$g/output.log" | tail -n 1)" = "# devmem-lab: begin devmem devmem-lab:dbg-x" ]'
t "parallel: one guest runs every destructive program, after the others (none is left unrun)" \
    bash -c 'prun "$PT/d1" --jobs 1 --tests "$PTESTS devmem-lab:dbg-y" >/dev/null 2>&1
        [ "$(grep "^# devmem-lab: begin" "$PT/d1/guest-1/output.log" | tail -n 2 | cut -d" " -f5 | tr "\n" " ")" = "devmem-lab:dbg-x devmem-lab:dbg-y " ] &&
        ! grep -qv "	done" "$PT/d1/jobs.tsv" || { cat "$PT/d1/jobs.tsv"; false; }'
t "parallel: no guest runs a devmem program after an accel one (pairs in order, as in one guest)" \
    bash -c 'printf "int main(){}\n// NCDEVMEM_PROOF fake-accel: %%zu bytes of device memory\n" >"$PKS/drivers/net/hw/ncdevmem"
        printf "drivers/net:a.py devmem,accel\ndrivers/net:b.py devmem,accel\ndrivers/net:c.py devmem,accel\n" >"$PT/po.list"
        mkdir -p "$PT/cache"   # the accel runs were the longest last time: longest-first alone would start them
        printf "accel drivers/net:%s 100\n" a.py b.py c.py >"$PT/cache/durations.tsv"
        par_env "$ROOT/scripts/run-selftests" --pairs "devmem accel" --list "$PT/po.list" \
            --no-expect --no-known --jobs 2 --out "$PT/po" >/dev/null 2>&1
        for g in "$PT"/po/guest-*; do
            grep "^# devmem-lab: begin" "$g/output.log" | cut -d" " -f4 | uniq | tr "\n" " "; echo
        done | grep -q "accel devmem" && { cat "$PT"/po/jobs.tsv; false; } || [ "$(grep -c "^accel" "$PT/po/matrix.txt")" = 3 ]'
# solo.txt: a program that runs alone (no other guest's program overlaps it in time).
printf 'drivers/net:b.py  # a reason\ndevmem-lab:dbg-x  # destructive and solo\n' >"$PT/solo.txt"
t "parallel: solo programs run alone (no other program overlaps them); every program runs" \
    bash -c 'rm -f "$PT/tl"; DEVMEM_LAB_SOLO="$PT/solo.txt" FAKE_TIMELINE="$PT/tl" FAKE_SLEEP=0.4 \
            prun "$PT/solo" --jobs 3 >/dev/null 2>&1
        [ "$(wc -l <"$PT/tl")" = 6 ] && [ "$(grep -c "	done" "$PT/solo/jobs.tsv")" = 6 ] &&
        grep -q " solo$" "$PT/solo/jobs.txt" &&
        awk "NR == FNR { if (\$1 == \"drivers/net:b.py\" || \$1 == \"devmem-lab:dbg-x\") { s[\$1] = \$2; e[\$1] = \$3 }; next }
             { for (k in s) if (\$1 != k && \$2 < e[k] && \$3 > s[k]) { print \$1 \" overlaps \" k; bad = 1 } }
             END { exit bad }" "$PT/tl" "$PT/tl" || { cat "$PT/tl" "$PT/solo/jobs.tsv"; false; }'
t "parallel: without solo.txt, programs overlap (the solo check above can fail)" \
    bash -c 'rm -f "$PT/tl2"; DEVMEM_LAB_SOLO=/nonexistent FAKE_TIMELINE="$PT/tl2" FAKE_SLEEP=0.4 \
            prun "$PT/nosolo" --jobs 3 >/dev/null 2>&1
        awk "NR == FNR { if (\$1 == \"drivers/net:b.py\") { s = \$2; e = \$3 }; next }
             \$1 != \"drivers/net:b.py\" && \$2 < e && \$3 > s { hit = 1 } END { exit !hit }" "$PT/tl2" "$PT/tl2" ||
            { cat "$PT/tl2"; false; }'
t "parallel: a guest that dies loses only its program (lost, not run again); the others finish the queue" \
    bash -c 'FAKE_DIE_ON=drivers/net/hw:d.py prun "$PT/die" --jobs 2 >/dev/null 2>&1
        [ "$(awk -F"\t" "\$4 == \"lost\"" "$PT/die/jobs.tsv" | cut -f2)" = drivers/net/hw:d.py ] &&
        [ "$(awk -F"\t" "\$4 == \"done\"" "$PT/die/jobs.tsv" | wc -l)" = 5 ] || { cat "$PT/die/jobs.tsv"; false; }'
t "parallel: a run with a lost program does not exit 0" \
    bash -c 'FAKE_DIE_ON=drivers/net/hw:d.py prun "$PT/die2" --jobs 2 >/dev/null 2>&1; rc=$?; [ $rc != 0 ] || { echo "exit $rc"; false; }'
t "parallel: --jobs 0 and --jobs x are usage errors" \
    bash -c '! prun "$PT/u" --jobs 0 >/dev/null 2>&1 && prun "$PT/u" --jobs x >/dev/null 2>&1; [ $? = 2 ]'
t "parallel: megabytes of guest output are not 'no guest ran a test' (exit 3; was: cat | grep -q under pipefail)" \
    bash -c 'FAKE_PAD_BYTES=2000000 prun "$PT/big" --jobs 2 >"$PT/big.out" 2>&1; rc=$?
        [ $rc = 0 ] && ! grep -q "no guest ran a test" "$PT/big.out" || { echo "exit $rc"; tail -n 3 "$PT/big.out"; false; }'
# The queue's order from two durations files: the first that names a program gives its time
# (the cache's last run, then the committed tests/guest/durations.txt on a fresh machine).
jq_all() {   # jq_all JOBS [job-queue options]: every program the queue hands one guest, as PAIR:TEST
    local jobs=$1 q i
    shift
    rm -f "$PT/jq.sock"
    python3 "$ROOT/scripts/lib/job-queue" --socket "$PT/jq.sock" --jobs "$jobs" --guests 1 \
        --out "$PT/jq.tsv" "$@" 2>/dev/null &
    q=$!
    for i in $(seq 100); do [ -S "$PT/jq.sock" ] && break; sleep 0.1; done
    python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
f.write("hello 1\n"); out = []
while True:
    f.write("next\n"); f.flush(); w = f.readline().split()
    if not w or w[0] != "run":
        break
    out.append(w[1] + ":" + w[2]); f.write(f"done {w[1]} {w[2]} 0\n")
print(" ".join(out))' "$PT/jq.sock"
    kill -TERM "$q" 2>/dev/null; wait "$q" 2>/dev/null
    return 0
}
jq_first() {   # jq_first DURATIONS_ARGS...: the program the queue hands out first
    printf 'devmem drivers/net:a.py\ndevmem drivers/net:b.py\ndevmem drivers/net:c.py\n' >"$PT/jqo.txt"
    local o
    o=$(jq_all "$PT/jqo.txt" "$@")
    o=${o%% *}
    echo "${o#devmem:}"
}
export -f jq_all jq_first
printf '# a comment line\ndevmem drivers/net:a.py 10\ndevmem drivers/net:b.py 20  # s\ndevmem drivers/net:c.py 300\n' >"$PT/committed.txt"
t "parallel: a fresh machine (no cache durations) starts the committed file's longest program first" \
    bash -c '[ "$(jq_first --durations "$PT/none.tsv" --durations "$PT/committed.txt")" = drivers/net:c.py ]'
t "parallel: without durations the list's order (the check above can fail)" \
    bash -c '[ "$(jq_first)" = drivers/net:a.py ]'
printf 'devmem drivers/net:%s\n' 'a.py 5' 'b.py 3' 'c.py 1' >"$PT/cache2.tsv"
t "parallel: the cache's time of a program wins over the committed file's" \
    bash -c '[ "$(jq_first --durations "$PT/cache2.tsv" --durations "$PT/committed.txt")" = drivers/net:a.py ]'
# Destructive programs: longest first within a pair, the pair's last listed one still last.
printf 'devmem drivers/net:a.py\ndevmem devmem-lab:x destructive\ndevmem devmem-lab:y destructive\ndevmem devmem-lab:z destructive\ndevmem devmem-lab:w destructive\naccel devmem-lab:v destructive\n' >"$PT/dq.txt"
printf 'devmem devmem-lab:%s\n' 'x 10' 'y 50' 'z 30' 'w 90' >"$PT/dq-dur.txt"
echo 'accel devmem-lab:v 99' >>"$PT/dq-dur.txt"
t "parallel: destructive programs longest first within their pair, the pair's last listed one last" \
    bash -c 'o=$(jq_all "$PT/dq.txt" --durations "$PT/dq-dur.txt"); [ "$o" = "devmem:drivers/net:a.py devmem:devmem-lab:y devmem:devmem-lab:z devmem:devmem-lab:x devmem:devmem-lab:w accel:devmem-lab:v" ] || { echo "$o"; false; }'
t "parallel: without durations, destructive programs in the list's order (the check above can fail)" \
    bash -c 'o=$(jq_all "$PT/dq.txt"); [ "$o" = "devmem:drivers/net:a.py devmem:devmem-lab:x devmem:devmem-lab:y devmem:devmem-lab:z devmem:devmem-lab:w accel:devmem-lab:v" ] || { echo "$o"; false; }'
t "parallel: the durations kept for the next run are a program's first run, not its retry's" \
    bash -c 'rm -rf "$PT/cache"; FAKE_FAIL=drivers/net:b.py FAKE_RETRY_ON=drivers/net:b.py FAKE_SLEEP=0.3 \
            prun "$PT/rt" --jobs 1 >/dev/null 2>&1
        grep -q "retry devmem drivers/net:b.py" "$PT/rt/guest-1/output.log" &&
        [ "$(awk "\$2 == \"drivers/net:b.py\" { print \$3 }" "$PT/cache/durations.tsv")" = 0.3 ] ||
        { cat "$PT/cache/durations.tsv"; false; }'
# --host-agent: a QMP socket and an agent per guest (make check-debug's fault scenarios).
printf '#!/bin/sh\necho "$1 $2" >>"%s/agents.txt"\n' "$PT" >"$PT/fake-agent"
chmod +x "$PT/fake-agent"
t "host agent: --qmp with more than one guest is a usage error that names --host-agent" \
    bash -c 'out=$(prun "$PT/q2" --jobs 2 --qmp /tmp/dl-one.qmp 2>&1 >/dev/null); rc=$?
        [ $rc = 2 ] && grep -q -- --host-agent <<<"$out" || { echo "exit $rc: $out"; false; }'
t "host agent: --host-agent gives each guest its own QMP socket and an agent on that guest's log" \
    bash -c 'rm -f "$PT/agents.txt"; DEVMEM_LAB_QMP_AGENT=$PT/fake-agent prun "$PT/ha" --jobs 2 --host-agent >/dev/null 2>&1
        for g in 1 2; do
            s=$(cat "$PT/ha/guest-$g/qmp-arg") || exit 1
            grep -qx "$s $PT/ha/guest-$g/output.log" "$PT/agents.txt" || { cat "$PT/agents.txt"; exit 1; }
        done
        [ "$(sort -u "$PT"/ha/guest-*/qmp-arg | wc -l)" = 2 ] && [ "$(wc -l <"$PT/agents.txt")" = 2 ]'
# A run-vm that hangs, and (as run-vm does) takes its QEMU (here: a sleep) down on TERM: its
# trap is set before the "QEMU" starts, and it waits for it to end; it says it is ready
# (LOGDIR/ready, with the sleep's pid) only then. (Issue 46: the test killed the runner a
# fixed 2 s after the start, which under load came before the guests had started or their
# traps were set, and a "sleep 61" of another harness run on the machine counted as left.)
cat >"$PT/hang-run-vm" <<'EOS'
#!/bin/bash
d=
while [ $# -gt 0 ]; do [ "$1" = --log-dir ] && d=$2; shift; done
trap 'kill $q 2>/dev/null; wait $q; exit 143' TERM
sleep 61 & q=$!
echo "$q" >"$d/ready"
wait $q
EOS
chmod +x "$PT/hang-run-vm"
# signals_stop: both guests up (ready), TERM to the runner; then its exit, its summary, and
# none of its guests' run-vm or "QEMU" left.
signals_stop() {
    RUN_VM=$PT/hang-run-vm prun "$PT/kill" --jobs 2 >/dev/null 2>&1 & local p=$! i rc=0 q left=
    for i in $(seq 600); do
        [ -s "$PT/kill/guest-1/ready" ] && [ -s "$PT/kill/guest-2/ready" ] && break
        sleep 0.1
    done
    [ -s "$PT/kill/guest-2/ready" ] || { echo "the guests did not start in 60 s"; kill -TERM $(pgrep -f "scripts/run-selftests .*$PT/kill"); wait $p; return 1; }
    kill -TERM $(pgrep -f "scripts/run-selftests .*$PT/kill")
    wait $p || rc=$?
    for q in $(cat "$PT/kill"/guest-*/ready); do kill -0 "$q" 2>/dev/null && left+=" $q"; done
    pgrep -f "$PT/hang-run-vm" >/dev/null && left+=" run-vm"
    [ $rc = 143 ] && [ -z "$left" ] && [ -f "$PT/kill/summary.txt" ] ||
        { echo "exit $rc; left:$left"; pkill -f "$PT/hang-run-vm"; return 1; }
}
t "signals: run-selftests killed with TERM stops its guests (none left behind) and still writes a summary" signals_stop

export -f par_env prun summary_rows
export PT PTESTS PKS ROOT

# --- shards: deterministic, disjoint, together the whole list ------------------------------
shards_ok() {
    local i all=
    for i in 1 2 3; do
        prun "$PT/s$i" --shard "$i/3" >/dev/null 2>&1 || true
        all+=$(cat "$PT/s$i/matrix.txt")$'\n'
    done
    prun "$PT/s2b" --shard 2/3 >/dev/null 2>&1 || true
    diff <(sed '/^$/d' <<<"$all" | sort) <(sort "$PT/s1/matrix-full.txt") &&
        [ -z "$(sed '/^$/d' <<<"$all" | sort | uniq -d)" ] &&
        cmp -s "$PT/s2/matrix.txt" "$PT/s2b/matrix.txt" &&
        read -r i n sha <"$PT/s3/shard" && [ "$i $n" = "3 3" ] && [ ${#sha} = 64 ]
}
t "shards: 1/3 2/3 3/3 are disjoint, together the whole list, the same each time, each marked I N SHA" shards_ok
t "shards: --shard 4/3 and --shard 1 are usage errors" \
    bash -c 'prun "$PT/u" --shard 4/3 >/dev/null 2>&1; a=$?; prun "$PT/u" --shard 1 >/dev/null 2>&1; b=$?; [ $a = 2 ] && [ $b = 2 ]'

# --- pairs: explicit; no provider, no pass on host memory ----------------------------------
t "pairs: accel without the fake-accel provider in ncdevmem is skipped with the reason, exit 1 (was: ran on udmabuf)" \
    bash -c 'printf "int main(){}\n" >"$PKS/drivers/net/hw/ncdevmem"
        par_env "$ROOT/scripts/run-selftests" --pairs "devmem accel" --tests drivers/net:a.py --no-expect --no-known \
            --out "$PT/acc" >"$PT/acc.out" 2>&1; rc=$?
        [ $rc = 1 ] && grep -q "skipped: pair accel: the installed ncdevmem has no fake-accel provider" "$PT/acc/summary.txt" ||
        { tail -n 5 "$PT/acc.out"; echo "exit $rc"; false; }'
t "pairs: asked-for gpu without the GL QEMU is an infrastructure error (was: skipped, exit 0)" \
    bash -c 'par_env "$ROOT/scripts/run-selftests" --pairs gpu --tests drivers/net:a.py --no-expect --no-known \
        --out "$PT/gpu" >"$PT/gpu.out" 2>&1; rc=$?; [ $rc = 3 ] && grep -q "no GL QEMU" "$PT/gpu.out" || { cat "$PT/gpu.out"; false; }'

# --- the guest's run-tests: retry right after, per-test timeout, proof lines ---------------
GT=$PT/g
mkdir -p "$GT/ksft/drivers/net/hw" "$GT/ksft/drivers/net" "$GT/guest"
# (a NETIF no machine has, and an ethtool stub: make check never touches the host's NIC)
printf '#!/bin/sh\necho export NETIF=dl-none0\n' >"$GT/guest/setup-net"
mkdir -p "$GT/guest/bin"
printf '#!/bin/sh\nexit 0\n' >"$GT/guest/bin/ethtool"
chmod +x "$GT/guest/bin/ethtool"
printf 'drivers/net/hw:flaky.py\ndrivers/net:next.py\n' >"$GT/ksft/kselftest-list.txt"
echo timeout=0 >"$GT/ksft/drivers/net/hw/settings"
echo timeout=360 >"$GT/ksft/drivers/net/settings"
cat >"$GT/ksft/run_kselftest.sh" <<'EOS'
#!/bin/sh
# args: [-o N] -t coll:prog. Prints its -o, fails flaky.py on the first call.
o=none
[ "$1" = -o ] && { o=$2; shift 2; }
t=$2; c=${t%%:*}; p=${t#*:}
echo "# selftests: $c: $p"
echo "# timeout: $o"
echo "# load nice: ${DEVMEM_LAB_LOAD_NICE:-unset}"
if [ "$p" = flaky.py ] && [ ! -e "$STATE" ]; then
    : >"$STATE"; echo "# not ok 1 flaky.case"; echo "not ok 1 selftests: $c: $p # exit=1"
else
    [ -n "$NCDEVMEM_PROOF" ] && echo "fake-accel: 4096 bytes of device memory at BAR offset 0" >>"$NCDEVMEM_PROOF"
    echo "# ok 1 $p.case"; echo "ok 1 selftests: $c: $p"
fi
EOS
chmod +x "$GT/guest/setup-net" "$GT/ksft/run_kselftest.sh"
grun() {
    rm -f "$GT/state"
    STATE=$GT/state GUEST_DIR=$GT/guest KSFT=$GT/ksft KSFT_MACHINE_SLOW=yes KNOWN_CASES= \
        SPARE_CPU_TESTS=none DEVMEM_LAB_KMSG=$GT/kmsg "$@" \
        bash "$ROOT/images/guest/run-tests" accel drivers/net/hw:flaky.py drivers/net:next.py
}
export -f grun
export GT
t "guest: a failed program is retried right after it, before the next program (was: after all)" \
    bash -c 'out=$(grun env); [ "$(grep -E "^# devmem-lab: (begin|retry)" <<<"$out" | cut -d" " -f3-5)" = "$(printf "begin accel drivers/net/hw:flaky.py\nretry accel drivers/net/hw:flaky.py\nbegin accel drivers/net/hw:flaky.py\nbegin accel drivers/net:next.py")" ] || { echo "$out"; false; }'
t "guest: a timeout=0 collection gets the default per-test timeout (600 s under TCG); timeout=360 is kept" \
    bash -c 'out=$(grun env); grep -q "run_kselftest.sh -o 600 -t drivers/net/hw:flaky.py" <<<"$out" &&
        grep -q "run_kselftest.sh  -t drivers/net:next.py" <<<"$out" || { echo "$out"; false; }'
t "guest: TEST_TIMEOUT overrides every test's timeout" \
    bash -c 'grun env TEST_TIMEOUT=77 | grep -q "run_kselftest.sh -o 77 -t drivers/net:next.py"'
t "guest: ncdevmem's provider lines land inside the program's frame as proof lines" \
    bash -c 'out=$(grun env); grep -B1 "^# devmem-lab: end accel drivers/net:next.py" <<<"$out" |
        grep -q "^# devmem-lab: proof accel drivers/net:next.py fake-accel: 4096 bytes of device memory" || { echo "$out"; false; }'

t "guest: the load generator's priority is nice 19, 0 for a program in FULL_LOAD_TESTS" \
    bash -c 'out=$(grun env FULL_LOAD_TESTS=drivers/net:next.py)
        [ "$(grep -E "^# (selftests|load nice):" <<<"$out" | tr "\n" " ")" = "# selftests: drivers/net/hw: flaky.py # load nice: 19 # selftests: drivers/net/hw: flaky.py # load nice: 19 # selftests: drivers/net: next.py # load nice: 0 " ] || { echo "$out"; false; }'
mkdir -p "$GT/bt-bin"
printf '#!/bin/sh\necho "$*" >>"$BT_CALLS"\n' >"$GT/bt-bin/bpftrace"
chmod +x "$GT/bt-bin/bpftrace"
t "guest: bpftrace is started once a boot, before the first program in BPFTRACE_TESTS, outside its frame; not for others" \
    bash -c 'b=$GT/bt; rm -f "$b".*
        out=$(grun env PATH="$GT/bt-bin:$PATH" BT_CALLS="$b.calls" BPFTRACE_WARM="$b.warm" \
            BPFTRACE_TESTS="drivers/net/hw:flaky.py drivers/net:next.py")
        [ "$(wc -l <"$b.calls")" = 1 ] && grep -q "^-q -e kprobe:" "$b.calls" &&
        [ "$(grep -E "^# devmem-lab: (begin|bpftrace)" <<<"$out" | head -n 2 | cut -d" " -f3-7)" = "$(printf "bpftrace started once before drivers/net/hw:flaky.py:\nbegin accel drivers/net/hw:flaky.py")" ] ||
            { echo "$out"; cat "$b.calls"; false; }
        rm -f "$b".*
        out=$(grun env PATH="$GT/bt-bin:$PATH" BT_CALLS="$b.calls" BPFTRACE_WARM="$b.warm" \
            BPFTRACE_TESTS="drivers/net:other.py")
        [ ! -e "$b.calls" ] && ! grep -q "bpftrace started" <<<"$out" || { echo "$out"; false; }'
printf '#!/bin/sh\nnice\n' >"$GT/fake-iperf3"
chmod +x "$GT/fake-iperf3"
t "guest: bin/iperf3 runs iperf3 at DEVMEM_LAB_LOAD_NICE (19 unset or not a number)" \
    bash -c 'w=$1/images/guest/bin/iperf3; export DEVMEM_LAB_IPERF3=$2/fake-iperf3; here=$(nice)
        [ "$("$w")" = 19 ] && [ "$(DEVMEM_LAB_LOAD_NICE=x "$w")" = 19 ] &&
        [ "$(DEVMEM_LAB_LOAD_NICE=0 "$w")" = "$here" ] && [ "$(DEVMEM_LAB_LOAD_NICE=5 "$w")" = $(( here + 5 > 19 ? 19 : here + 5 )) ]' _ "$ROOT" "$GT"

printf '#!/bin/sh\ncase "$1" in -g) echo "TCP data split:\ton";; -G) echo "$*" >>"$GT/ethtool-set";; esac\n' >"$GT/guest/bin/ethtool"
t "guest: tcp-data-split left on by an earlier program is set back to auto before the next one" \
    bash -c 'rm -f "$GT/ethtool-set"; out=$(grun env GT="$GT"); grep -q "tcp-data-split was left on by an earlier program" <<<"$out" &&
        grep -q "^-G dl-none0 tcp-data-split auto" "$GT/ethtool-set" || { echo "$out"; false; }'
printf '#!/bin/sh\nexit 0\n' >"$GT/guest/bin/ethtool"

# --- run-vm: QEMU dying after the guest command finished is not a pass ---------------------
cat >"$PT/die-qemu" <<'EOS'
#!/bin/sh
# A QEMU that runs the guest command to its end, then dies (exit 1).
n=0
for a in "$@"; do
    case "$a" in file:*) n=$((n + 1)); f=${a#file:}
        [ $n = 1 ] && echo "Run /sbin/devmem-lab-init as init process" >>"$f"
        [ $n = 2 ] && echo "DEVMEM-LAB-EXIT: 0" >>"$f" ;;
    esac
done
sleep 1
exit 1
EOS
chmod +x "$PT/die-qemu"
: >"$PT/k"
t "run-vm: QEMU exiting 1 after the guest command finished is exit 125 (was: the command's 0)" \
    bash -c 'QEMU=$1/die-qemu DEVMEM_LAB_ACCEL=tcg "$2/scripts/run-vm" --kernel "$1/k" --image "$1/k" \
        --tests-disk "$1/k" --log-dir "$1/dvm" -- true >"$1/dvm.out" 2>&1; rc=$?
        [ $rc = 125 ] && grep -q "QEMU then exited 1" "$1/dvm.out" || { cat "$1/dvm.out"; echo "exit $rc"; false; }' _ "$PT" "$ROOT"
