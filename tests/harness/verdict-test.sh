# SPDX-License-Identifier: GPL-2.0-or-later
# verdict-test.sh: the harness's tests of issue 41 ("a verdict no program can forge"), sourced
# by tests/harness/harness-test (its t/rc_is/says helpers, $TMP, $ROOT, $R, $KTAP, $RF). Each
# reproduces a finding of the 2026-12-06 review (fixtures/review41/, its README) and names it;
# each failed on 8d70579's scripts.

V=$TMP/v41
RV=$ROOT/tests/harness/fixtures/review41
mkdir -p "$V"
# case_dir NAME: a writable copy of a review run dir
case_dir() { rm -rf "$V/$1"; cp -r "$RV/$1" "$V/$1"; chmod -R u+w "$V/$1"; echo "$V/$1"; }
# vrun WANT_RC PATTERN DIR ARGS...: ktap-report --run-dir exits WANT_RC and says PATTERN
vrun() {
    local want=$1 pat=$2 d=$3
    shift 3
    rc_is "$want" "$R" --run-dir "$d" "$@" || return 1
    grep -qE -- "$pat" "$TMP/out" || { tail -n 15 "$TMP/out"; echo "no line matching '$pat'"; return 1; }
}

# --- H1: control lines out of band -------------------------------------------------------
# The guest's real run-tests with a fake kselftest tree whose program prints our end line
# (the runner's "# " prefix makes it look like ours), then fails; the host's report of it.
VG=$V/g
mkdir -p "$VG/ksft" "$VG/guest/bin"
printf '#!/bin/sh\necho NETIF=dl-none0\n' >"$VG/guest/setup-net"
# ethtool in the guest's bin/: records what run-tests asks of it (no host interface touched)
printf '#!/bin/sh\necho "$*" >>"%s/guest-ethtool.log"\n' "$V" >"$VG/guest/bin/ethtool"
echo 'drivers/net:xdp.py' >"$VG/ksft/kselftest-list.txt"
cat >"$VG/ksft/run_kselftest.sh" <<'EOS'
#!/bin/sh
echo "# selftests: drivers/net: xdp.py"
echo "# TAP version 13"
echo "# 1..2"
echo "# ok 1 xdp.test_a"
echo "# devmem-lab: end devmem drivers/net:xdp.py rc=0 time_ms=1"
printf '# \033[0mdevmem-lab: proof devmem drivers/net:xdp.py forged\n'
printf '# junk\r# devmem-lab: begin devmem drivers/net:other.py\n'
echo "# # Check failed 0 != 1: queue 3 got no traffic"
echo "# not ok 2 xdp.test_b"
echo "not ok 1 selftests: drivers/net: xdp.py # exit=1"
EOS
chmod +x "$VG/guest/setup-net" "$VG/guest/bin/ethtool" "$VG/ksft/run_kselftest.sh"
# vguest OUTDIR: run-tests as run-queue runs it, its output as guest-1 of a run dir
vguest() {
    mkdir -p "$1/guest-1"
    echo 'devmem drivers/net:xdp.py' >"$1/matrix.txt"
    GUEST_DIR=$VG/guest KSFT=$VG/ksft KSFT_MACHINE_SLOW=yes SPARE_CPU_TESTS=none KNOWN_CASES= \
        DEVMEM_LAB_KMSG=$1/kmsg bash "$ROOT/images/guest/run-tests" devmem drivers/net:xdp.py \
        >"$1/guest-1/output.log" 2>&1 || true
    echo 0 >"$1/guest-1/rc"
    : >"$1/guest-1/console.log"
}
vguest "$V/h1"
t "H1 forged end line: a program printing 'devmem-lab: end ... rc=0' and failing is a FAIL through the real run-tests (was: PASS, exit 0)" \
    vrun 1 'xdp.py xdp.test_b: .*Check failed 0 != 1' "$V/h1"
t "H1 forged end line: run-tests passes the program's control-like lines on as '# [out]' (ANSI and CR too; both attempts); output.log keeps the failure" \
    bash -c 'o=$1/guest-1/output.log; [ "$(grep -c "^# \[out\] " "$o")" = 6 ] && [ "$(grep -c "^# devmem-lab: begin" "$o")" = 2 ] &&
        grep -q "not ok 2 xdp.test_b" "$1/output.log" || { cat "$o"; false; }' _ "$V/h1"
sed 's/^# ok 1 devmem.check_rx$/# # devmem-lab: proof accel drivers\/net\/hw:devmem.py fake-accel: 1 bytes of device memory at BAR offset 0\n&/' \
    "$RF/accel-noproof.log" >"$V/forged-proof.log"
t "H1 forged proof line: a proof line in the program's own output is no proof (was: accepted nested, PASS)" \
    bash -c 'grep -q "^# # devmem-lab: proof" "$2" || exit 1; "$1" "$2" --proof "$3" >"$2.out"; [ $? = 1 ] &&
        grep -q "no proof the payload went to fake-accel device memory" "$2.out" || { cat "$2.out"; false; }' \
    _ "$R" "$V/forged-proof.log" "$ROOT/tests/guest/proof.txt"
f1=$(case_dir f1)
t "H1 forged end line (review f1, report only): a frame ended twice is a FAIL naming it (was: PASS, exit 0)" \
    vrun 1 '\(frame\): the frame is broken: ended twice' "$f1"
f3=$(case_dir f3)
t "H1 forged begin inside a frame (review f3): the frame is broken, a FAIL, not infrastructure (was: INFRA, exit 3)" \
    vrun 1 'a\.py \(frame\): the frame is broken: a begin line inside its frame' "$f3"
f4=$(case_dir f4)
t "H1 framed twice (review f4): one program framed as a first attempt by two guests is a FAIL (was: the first guest's PASS, exit 0)" \
    vrun 1 '\(frame\): framed 2 times \(guest-1 attempt 1, guest-2 attempt 1\)' "$f4"

# --- M1: known failures keyed by reason ---------------------------------------------------
kn=$(case_dir kn)
t "M1 known by reason (review kn): netpoll failing for a driver error is a FAIL, not KNOWN (was: KNOWN, exit 0)" \
    vrun 1 'netpoll_basic.test_netpoll: .*dmnic_poll_controller returned -EINVAL \(listed in known-failures.txt, but not for this' \
    "$kn" --known "$ROOT/tests/guest/known-failures.txt"
sed 's/netconsole: 0 of 200 messages reached the peer; dmnic_poll_controller returned -EINVAL/KsftFailEx: bpftrace failed to run!?: {}/' \
    "$RV/kn/guest-1/output.log" >"$kn/guest-1/output.log"
t "M1 known by reason: the same case failing for its listed reason (bpftrace's window) is KNOWN (exit 0)" \
    vrun 0 'cases: 1 known' "$kn" --known "$ROOT/tests/guest/known-failures.txt"
printf 'devmem drivers/net:netpoll_basic.py netpoll_basic.test_netpoll  # no pattern\n' >"$V/nopat.txt"
t "M1 known by reason: an entry without a /pattern/ is bad input (exit 2)" \
    vrun 2 'want "PAIR TEST CASE  /REGEX/' "$kn" --known "$V/nopat.txt"
hk() {  # hk EXTRA-LINE: rss_ctx's hitless_key_update failing on its time bound (and EXTRA)
    mkdir -p "$V/hk/guest-1"
    echo 'devmem drivers/net/hw:rss_ctx.py' >"$V/hk/matrix.txt"
    { echo '# devmem-lab: begin devmem drivers/net/hw:rss_ctx.py'
      printf '# selftests: drivers/net/hw: rss_ctx.py\n# TAP version 13\n# 1..1\n'
      echo '# # Check| At /opt/ksft/kselftest/drivers/net/hw/rss_ctx.py, line 377, in test_hitless_key_update:'
      echo '# # Check|     ksft_lt((t1 - t0).total_seconds(), 0.15)'
      echo '# # Check failed 1.912301 >= 0.15'
      [ -z "$1" ] || echo "# # $1"
      echo '# not ok 1 rss_ctx.test_hitless_key_update'
      echo 'not ok 1 selftests: drivers/net/hw: rss_ctx.py # exit=1'
      echo '# devmem-lab: end devmem drivers/net/hw:rss_ctx.py rc=1 time_ms=9000'; } >"$V/hk/guest-1/output.log"
    echo 0 >"$V/hk/guest-1/rc"; : >"$V/hk/guest-1/console.log"
}
hk ''
t "item 10: rss_ctx hitless_key_update over its 0.15 s bound only is KNOWN (the time bound alone)" \
    vrun 0 'cases: 1 known' "$V/hk" --known "$ROOT/tests/guest/known-failures.txt"
hk 'Check failed 3 != 0'
t "item 10: the same case with a drop besides the time bound is a FAIL" \
    vrun 1 'test_hitless_key_update: .*not for this' "$V/hk" --known "$ROOT/tests/guest/known-failures.txt"

# --- M2, M3, M8: splats -------------------------------------------------------------------
t "M2 splat absorption (review absorb-console.log): a UBSAN report after a known boot KASAN report is caught (was: none)" \
    says 'UBSAN: array-index-out-of-bounds in drivers/net/ethernet/devmem_nic' $KTAP splats "$RV/absorb-console.log"
t "M2 splat absorption: the known KASAN report alone is still known (one block, to its closing '=' line)" \
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import ktap
ls = open(sys.argv[2]).read().splitlines()
cut = [i for i, ln in enumerate(ls) if "some boot line 30" in ln][0]
h, k = ktap.unknown_splats(ls[:cut + 1]); assert not h and k == 1, (h, k)
h, k = ktap.unknown_splats(ls); assert h and k == 1, (h, k)' "$ROOT/scripts/lib" "$RV/absorb-console.log"
mkdir -p "$V/tx/guest-1"
echo 'devmem drivers/net:xdp.py' >"$V/tx/matrix.txt"
cp "$RV/f4/guest-1/output.log" "$V/tx/guest-1/output.log"
cp "$RV/txto-console.log" "$V/tx/guest-1/console.log"
echo 0 >"$V/tx/guest-1/rc"
t "M3 TX watchdog (review txto-console.log): NETDEV WATCHDOG and 'TX timeout; restarting' fail the test that ran (was: exit 0)" \
    vrun 1 'xdp.py: kernel splat: .*NETDEV WATCHDOG' "$V/tx"
printf 'xdp\\.py  NETDEV WATCHDOG|TX timeout; restarting  # a scenario that stalls TX on purpose\n' >"$V/allowed.txt"
t "M3 TX watchdog: a program's declared allowance (splats-allowed.txt) lists it as allowed in its own slice (exit 0)" \
    bash -c 'DEVMEM_LAB_SPLATS_ALLOWED=$1/allowed.txt "$2" --run-dir "$1/tx" >"$1/tx.out"; rc=$?
        [ $rc = 0 ] && grep -q "allowed (splats-allowed.txt): .*NETDEV WATCHDOG" "$1/tx.out" || { cat "$1/tx.out"; echo "exit $rc"; false; }' _ "$V" "$R"
t "M3 TX watchdog: the allowance of another program does not cover it" \
    bash -c 'sed "s/^xdp/ping/" "$1/allowed.txt" >"$1/allowed2.txt"; DEVMEM_LAB_SPLATS_ALLOWED=$1/allowed2.txt "$2" --run-dir "$1/tx" >/dev/null; [ $? = 1 ]' _ "$V" "$R"
mkdir -p "$V/bh/guest-1"
echo 'devmem drivers/net:xdp.py' >"$V/bh/matrix.txt"
cp "$RV/f4/guest-1/output.log" "$V/bh/guest-1/output.log"
cp "$RF/clean-console.log" "$V/bh/guest-1/console.log"
printf '[    1.0] devmem_nic 0000:02:00.0: probing\n[  243.1] INFO: task swapper/0:1 blocked for more than 122 seconds.\n[  243.1] Call Trace:\n[  243.1]  dmnic_probe+0x5a1/0x900\n' \
    >"$V/bh/guest-1/console-boot1.log"
echo 0 >"$V/bh/guest-1/rc"
t "M8 hung first boot: the retried boot's console (console-boot1.log) is read, its splat fails the run and the retry is reported (was: exit 0)" \
    bash -c '"$1" --run-dir "$2" >"$2.out"; rc=$?; [ $rc = 1 ] && grep -q "INFO: task swapper/0:1 blocked" "$2.out" &&
        grep -q "guest-1: console-boot1.log: the boot did not reach userspace" "$2.out" || { cat "$2.out"; echo "exit $rc"; false; }' _ "$R" "$V/bh"
# job-queue: a guest whose QEMU went away (a hung first boot run-vm kills) connects again.
jq_reconnect() {
    printf 'devmem drivers/net:a.py\n' >"$V/jq.txt"
    python3 "$ROOT/scripts/lib/job-queue" --socket "$V/jq.sock" --jobs "$V/jq.txt" --guests 1 \
        --out "$V/jq.tsv" 2>"$V/jq.err" &
    local q=$! i ans
    for i in $(seq 100); do [ -S "$V/jq.sock" ] && break; sleep 0.1; done
    python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()' "$V/jq.sock"
    sleep 1.5   # (the old queue ended within its 1 s poll of a queue with no guest)
    ans=$(python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
f.write("hello 1\nnext\n"); f.flush(); print(f.readline().strip())' "$V/jq.sock" 2>&1)
    kill -TERM "$q" 2>/dev/null; wait "$q"
    [ "$ans" = "run devmem drivers/net:a.py" ] || { echo "second connection got: $ans"; cat "$V/jq.err"; return 1; }
}
t "M8 job-queue: a guest booted again after its first QEMU went away still gets its program (was: the queue had exited)" jq_reconnect

# --- M6, L6: our device crashing, run-vm usage ---------------------------------------------
mkdir -p "$V/dc/guest-1"
echo 'devmem drivers/net/hw:devmem.py' >"$V/dc/matrix.txt"
cp "$RF/hang.log" "$V/dc/guest-1/output.log"
cp "$RF/clean-console.log" "$V/dc/guest-1/console.log"
echo 125 >"$V/dc/guest-1/rc"
echo "qemu-system-x86_64: ../hw/net/devmem-nic/devmem-nic-core.c:812: dmnic_rx_complete: Assertion \`q->head < q->size' failed." >"$V/dc/guest-1/qemu.log"
t "M6 our device crashing: a QEMU assertion in devmem-nic under a program is a test failure, exit 1 (was: INFRA, exit 3, retried by GitLab)" \
    vrun 1 'devmem.py \(device crash\): QEMU crashed in our device while this ran: .*devmem-nic-core.c:812' "$V/dc"
echo "qemu-system-x86_64: terminating on signal 15 from pid 4242 (run-vm)" >"$V/dc/guest-1/qemu.log"
t "M6 our device crashing: a QEMU killed from outside is still infrastructure (exit 3)" \
    vrun 3 'INFRA' "$V/dc"
t "L6 run-vm: a bad option value is a usage error, exit 2 (was: 1, then INFRA exit 3 through run-selftests)" \
    rc_is 2 "$ROOT/scripts/run-vm" --timeout abc -- true

# --- M4: the merge is the run ----------------------------------------------------------------
mshard() {  # mshard DIR I N MATRIX-FULL MATRIX STATUS: a shard dir; STATUS its run-status
    local d=$1 sha
    rm -rf "$d"; mkdir -p "$d/guest-1"
    printf '%s\n' "$4" >"$d/matrix-full.txt"
    printf '%s\n' "$5" >"$d/matrix.txt"
    sha=$(sha256sum "$d/matrix-full.txt" | cut -d' ' -f1)
    echo "$2 $3 $sha" >"$d/shard"
    printf '%b' "$6" >"$d/run-status"
    echo devmem accel >"$d/pairs"
    : >"$d/expect-whole"
    cp "$RF/good.log" "$d/guest-1/output.log"
    cp "$RF/clean-console.log" "$d/guest-1/console.log"
    echo 0 >"$d/guest-1/rc"
}
MM='devmem drivers/net/hw:devmem.py'
mshard "$V/ms1" 1 2 "$MM" "$MM" 'fail\tpair accel\tskipped: the installed ncdevmem has no fake-accel provider\n'
mshard "$V/ms2" 2 2 "$MM" '' 'fail\tpair accel\tskipped: the installed ncdevmem has no fake-accel provider\n'
rm -rf "$V/ms2/guest-1"
t "M4 merge with a skipped pair: a shard's pair skip (run-status) fails --merge (was: exit 0)" \
    bash -c '"$1" --merge "$2/mm" "$2/ms1" "$2/ms2" >"$2/mm.out" 2>&1; rc=$?
        [ $rc = 1 ] && grep -q "pair accel (ms1) (run status): FAIL: skipped: the installed ncdevmem has no fake-accel provider" "$2/mm.out" ||
        { tail -n 12 "$2/mm.out"; echo "exit $rc"; false; }' _ "$R" "$V"
printf 'devmem drivers/net/hw:devmem.py devmem.check_rx\naccel drivers/net/hw:devmem.py devmem.check_rx\n' >"$V/mexp.txt"
printf '' >"$V/ms1/run-status"; printf '' >"$V/ms2/run-status"
t "M4 merge: expected lines of an asked pair missing from the matrix entirely fail (was: skipped, exit 0)" \
    bash -c '"$1" --merge "$2/mm2" "$2/ms1" "$2/ms2" --expect "$2/mexp.txt" >"$2/mm2.out" 2>&1; rc=$?
        [ $rc = 1 ] && grep -q "\[accel\] drivers/net/hw:devmem.py: expected PASS (1 case: devmem.check_rx), but the program is not in the run" "$2/mm2.out" ||
        { tail -n 12 "$2/mm2.out"; echo "exit $rc"; false; }' _ "$R" "$V"
printf 'fail\tpsp cable check guest-1\tFAIL: pattern in clear\n' >"$V/ms1/run-status"
printf 'devmem drivers/net/hw:devmem.py devmem.check_rx\n' >"$V/mexp2.txt"
t "M4 merge: a shard's failed PSP wire check fails --merge (was: only run-selftests' exit code)" \
    bash -c '"$1" --merge "$2/mm3" "$2/ms1" "$2/ms2" --expect "$2/mexp2.txt" >"$2/mm3.out" 2>&1; [ $? = 1 ] &&
        grep -q "psp cable check guest-1 (ms1) (run status): FAIL" "$2/mm3.out" || { tail -n 8 "$2/mm3.out"; false; }' _ "$R" "$V"

# --- M5, L2: KTAP ------------------------------------------------------------------------------
n2=$(case_dir n2)
t "M5 2-space nesting (review n2): a 2-space-indented nested 'not ok' under an 'ok' case fails it (was: PASS, exit 0)" \
    vrun 1 'example: a subtest failed under an "ok" result: test_2' "$n2"
sk=$(case_dir sk)
t "M5 failed subtest under SKIP (review sk): a SKIP case whose nested subtest failed is a FAIL (was: SKIP, exit 0)" \
    vrun 1 'a subtest failed under a SKIP result: xdp_tx_frame_lost' "$sk"
xf=$(case_dir xf)
t "L2 whole-program XFAIL (review xf): '# XFAIL' from the runner is a SKIP, not a PASS" \
    vrun 0 'program runs: 1: 1 skip' "$xf"

# --- M7: make check never touches the host ----------------------------------------------------
# A logging ethtool first in PATH: run-tests, as the harness runs it, calls none (its own
# bin/ stub answers, for the nonexistent dl-none0) and writes no marker to /dev/kmsg.
mkdir -p "$V/hostbin"
printf '#!/bin/sh\necho "$*" >>"%s/host-ethtool.log"\n' "$V" >"$V/hostbin/ethtool"
chmod +x "$V/hostbin/ethtool"
t "M7 make check as root: run-tests in the harness calls no host ethtool (a logging one first in PATH) and writes its markers to DEVMEM_LAB_KMSG" \
    bash -c 'rm -f "$1/host-ethtool.log" "$1/guest-ethtool.log"; mkdir -p "$1/m7"
        PATH=$1/hostbin:$PATH GUEST_DIR=$2/guest KSFT=$2/ksft KSFT_MACHINE_SLOW=yes SPARE_CPU_TESTS=none \
            KNOWN_CASES= DEVMEM_LAB_KMSG=$1/m7/kmsg bash "$3/images/guest/run-tests" devmem drivers/net:xdp.py >/dev/null 2>&1
        [ ! -e "$1/host-ethtool.log" ] && grep -q "^-n dl-none0" "$1/guest-ethtool.log" && ! grep -qv "dl-none0" "$1/guest-ethtool.log" &&
            grep -q "devmem-lab: begin devmem drivers/net:xdp.py" "$1/m7/kmsg" ||
        { cat "$1/host-ethtool.log" "$1/guest-ethtool.log" 2>&1; false; }' _ "$V" "$VG" "$ROOT"
t "L6 run-selftests: run-vm refusing an option (--timeout abc) is a usage error, exit 2 (was: INFRA, exit 3, retried)" \
    rc_is 2 env DEVMEM_LAB_BUILD="$TMP/build" DEVMEM_LAB_OUT="$V/out" DEVMEM_LAB_CACHE="$V/cache" DEVMEM_LAB_BOOT_STAGGER=0 \
    "$ROOT/scripts/run-selftests" --pairs devmem --tests drivers/net/hw:devmem.py --no-expect --no-known \
    --timeout abc --out "$V/u6"

# --- item 2 / L3: proof from the device, not from the program ------------------------------
PROOF=$ROOT/tests/guest/proof.txt
dp() { printf 'accel\tdrivers/net/hw:devmem.py\t1\t%s\t%s\n' "$1" "$2" >"$V/dp.tsv"; }
dp 1000 1000
t "item 2 device proof: accel devmem.py with ncdevmem's allocation line but fake-accel's BAR2 count unchanged is a FAIL (was: PASS on the allocation line)" \
    says 'no proof the payload went to fake-accel device memory \(bytes the NIC wrote .*got: .*p2p-write-bytes \+0' \
    "$R" "$RF/accel-proof.log" --proof "$PROOF" --device-proof "$V/dp.tsv"
dp 1000 66536
t "item 2 device proof: the count rose during the program (+65536): PASS" \
    rc_is 0 "$R" "$RF/accel-proof.log" --proof "$PROOF" --device-proof "$V/dp.tsv"
printf 'accel\tdrivers/net/hw:devmem.py\t1\t-\t-\tQMP qom-get: Property not found\n' >"$V/dp-un.tsv"
t "item 2 device proof: a count the host could not read is no proof (FAIL, the reason shown)" \
    says 'p2p-write-bytes unread: QMP qom-get: Property not found' \
    "$R" "$RF/accel-proof.log" --proof "$PROOF" --device-proof "$V/dp-un.tsv"
t "item 2 device proof: without the device's count (an old run) accel devmem.py does not pass" \
    rc_is 1 "$R" "$RF/accel-proof.log" --proof "$PROOF"
sed 's/^# devmem-lab: end accel/# devmem-lab: proof accel drivers\/net\/hw:devmem.py fake-accel: 40 chunks checked by device CRC, 3 bad\n&/' \
    "$RF/accel-proof.log" >"$V/crc-bad.log"
dp 0 65536
t "L3 CRC: an accel program whose ncdevmem says the device's CRC found bad chunks is a FAIL" \
    says 'did not arrive intact in fake-accel .*3 bad' "$R" "$V/crc-bad.log" --proof "$PROOF" --device-proof "$V/dp.tsv"
sed 's/ accel / gpu /; s/fake-accel: 65536 bytes of device memory at BAR offset 0/virtio-gpu: using \/dev\/dri\/renderD128/' \
    "$RF/accel-proof.log" >"$V/gpu-node.log"
t "L3 gpu: the render node's name alone is no proof (was: PASS)" \
    says 'no proof the payload went to virtio-gpu VRAM' "$R" "$V/gpu-node.log" --proof "$PROOF"
sed 's/virtio-gpu: using \/dev\/dri\/renderD128/virtio-gpu: 96 copies checked by the GPU, 0 bad/' "$V/gpu-node.log" >"$V/gpu-ok.log"
t "L3 gpu: 'N copies checked by the GPU, 0 bad' is the proof" \
    rc_is 0 "$R" "$V/gpu-ok.log" --proof "$PROOF"
# End to end: run-selftests' queue reads the count over QMP around each accel program (a fake
# run-vm serves the monitor; its counter grows by FAKE_P2P_BYTES during accel programs).
dproof_run() {  # dproof_run OUT [env...]
    local out=$1
    shift
    printf 'int main(){}\n// NCDEVMEM_PROOF fake-accel: %%zu bytes of device memory\n' >"$PKS/drivers/net/hw/ncdevmem"
    grep -qx drivers/net/hw:devmem.py "$PKS/kselftest-list.txt" || echo drivers/net/hw:devmem.py >>"$PKS/kselftest-list.txt"
    env "$@" bash -c 'par_env "$ROOT/scripts/run-selftests" --pairs accel --tests drivers/net/hw:devmem.py \
        --no-expect --no-known --jobs 1 --out "$1"' _ "$out" >"$out.out" 2>&1
}
export -f dproof_run
export V
t "item 2 device proof end to end: the queue reads p2p-write-bytes over QMP before and after the program; PASS with '+65536' in output.log" \
    bash -c 'dproof_run "$1/dp1"; rc=$?; [ $rc = 0 ] && grep -q "device proof accel drivers/net/hw:devmem.py device: fake-accel p2p-write-bytes +65536" "$1/dp1/output.log" ||
        { tail -n 15 "$1/dp1.out"; cat "$1/dp1/device-proof.tsv"; echo "exit $rc"; false; }' _ "$V"
t "item 2 device proof end to end: no bytes written into BAR2 during devmem.py fails it" \
    bash -c 'dproof_run "$1/dp2" FAKE_NO_P2P=drivers/net/hw:devmem.py; rc=$?; [ $rc = 1 ] &&
        grep -q "devmem.py.*no proof the payload went to fake-accel device memory" "$1/dp2/summary.txt" ||
        { tail -n 15 "$1/dp2.out"; echo "exit $rc"; false; }' _ "$V"

# --- item 11: every program of the list has expected lines; one that vanishes fails ---------
mkdir -p "$V/gen/guest-1"
printf 'devmem drivers/net/hw:devmem.py\ndevmem drivers/net:ping.py\n' >"$V/gen/matrix.txt"
cat "$RF/good.log" "$RF/ping.log" >"$V/gen/guest-1/output.log"
cp "$RF/clean-console.log" "$V/gen/guest-1/console.log"
echo 0 >"$V/gen/guest-1/rc"
t "item 11 generator: scripts/expected-from-run writes a line for every passing case of a run; that run meets them (exit 0)" \
    bash -c '"$1" --run-dir "$2" >/dev/null && "$3" "$2" --out "$2.exp" && [ "$(grep -c "^devmem " "$2.exp")" = "$(grep -c "	pass	" "$2/results.tsv")" ] &&
        "$1" --run-dir "$2" --expect "$2.exp" >/dev/null' _ "$R" "$V/gen" "$ROOT/scripts/expected-from-run"
t "item 11 vanished program: with the whole list run, a program with expected lines missing from the matrix fails (was: skipped, exit 0)" \
    bash -c 'echo devmem >"$2/pairs"; : >"$2/expect-whole"; sed -i "/ping.py/d" "$2/matrix.txt"
        "$1" --run-dir "$2" --expect "$2.exp" >"$2.o"; rc=$?; rm "$2/expect-whole"
        [ $rc = 1 ] && grep -q "drivers/net:ping.py: expected PASS .*not in the run" "$2.o" || { tail "$2.o"; false; }' _ "$R" "$V/gen"
t "item 11 vanished program: a run of a chosen list (no expect-whole) still skips what it did not ask for" \
    rc_is 0 "$R" --run-dir "$V/gen" --expect "$V/gen.exp"

# --- issue 45 item 3: one splat implementation, the guest's dbg_lib is ktap.py's -----------
mkdir -p "$V/dbg"
cp "$ROOT/tests/guest/dbg_lib.py" "$ROOT/scripts/lib/ktap.py" "$ROOT/scripts/lib"/splats*.txt "$V/dbg/"
t "one splat reader: the guest's dbg_lib (as on the tests disk) answers as ktap.py on every review console (absorption, TX watchdog)" \
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import dbg_lib, ktap
for f in sys.argv[2:]:
    ls = open(f).read().splitlines()
    a, b = dbg_lib.classify_splats(ls), ktap.unknown_splats(ls)
    assert a == b and a[0], (f, a, b)' "$V/dbg" "$RV/absorb-console.log" "$RV/txto-console.log"

# --- H1: the exit status on the job channel (out of band) against the frame ----------------
mkdir -p "$V/jc/guest-1"
echo 'devmem drivers/net:xdp.py' >"$V/jc/matrix.txt"
cp "$RV/f4/guest-1/output.log" "$V/jc/guest-1/output.log"
cp "$RF/clean-console.log" "$V/jc/guest-1/console.log"
echo 0 >"$V/jc/guest-1/rc"
printf 'devmem\tdrivers/net:xdp.py\t1\tdone\t1\n' >"$V/jc/jobs.tsv"
t "H1 out of band: a frame that says PASS while the guest runner's exit status on the job channel says 1 is a FAIL" \
    vrun 1 'drivers/net:xdp.py: FAIL: the guest runner exited 1 for it \(job channel\)' "$V/jc"
printf 'devmem\tdrivers/net:xdp.py\t1\tdone\t0\n' >"$V/jc/jobs.tsv"
t "H1 out of band: the same frame with exit status 0 on the job channel passes" vrun 0 'program runs: 1: 1 pass' "$V/jc"
t "item 11 vanished program: one shard's own report does not fail the programs of the other shards (its matrix-full.txt has them)" \
    bash -c 'rm -rf "$2s"; cp -r "$2" "$2s"; : >"$2s/expect-whole"; printf "devmem drivers/net/hw:devmem.py\ndevmem drivers/net:ping.py\n" >"$2s/matrix-full.txt"
        "$1" --run-dir "$2s" --expect "$2.exp" >"$2s.o"; rc=$?; [ $rc = 0 ] || { tail "$2s.o"; false; }' _ "$R" "$V/gen"
