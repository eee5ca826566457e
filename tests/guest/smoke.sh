# SPDX-License-Identifier: GPL-2.0-or-later
# Boot smoke test, run in the guest by `make check` (scripts/check): are both devices
# present behind the PCIe switch, are our drivers bound, did the drivers' KUnit suites pass?
# Prints KTAP framed for scripts/lib/ktap.py (its own checks, then the KUnit debugfs results).
n=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); echo "not ok $n $1${2:+ # $2}"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }

echo "# devmem-lab: begin smoke boot:smoke"
echo "TAP version 13"
lspci -nn | sed 's/^/# /'
lspci -t | sed 's/^/# /'
nics=$(lspci -Dn -d 1af4:10f0 | awk '{print $1}')
accels=$(lspci -Dn -d 1af4:10f1 | awk '{print $1}')
check "two devmem-nic functions (1af4:10f0)" test "$(echo "$nics" | grep -c .)" -eq 2
check "one fake-accel function (1af4:10f1)" test "$(echo "$accels" | grep -c .)" -eq 1

# The dut NIC and the accelerator share the switch's upstream port (P2P without host bridge).
upstream() { basename "$(dirname "$(dirname "$(readlink -f /sys/bus/pci/devices/$1)")")"; }
dut=
for d in $nics; do
    [ "$(cat /sys/bus/pci/devices/$d/net/*/address 2>/dev/null)" = 52:54:00:de:00:01 ] && dut=$d
done
[ -n "$dut" ] || dut=$(echo "$nics" | head -n1)
acc=$(echo "$accels" | head -n1)
check "dut NIC and accelerator behind one PCIe switch" \
    test -n "$dut" -a -n "$acc" -a "$(upstream "$dut")" = "$(upstream "$acc")"

drv() { basename "$(readlink -f /sys/bus/pci/devices/$1/driver 2>/dev/null)" 2>/dev/null; }
for d in $nics; do
    check "devmem_nic driver bound to $d" test "$(drv "$d")" = devmem_nic
done
for d in $accels; do
    check "fake_accel driver bound to $d" test "$(drv "$d")" = fake_accel
done
check "dut netdev present (MAC 52:54:00:de:00:01)" \
    grep -qx 52:54:00:de:00:01 /sys/class/net/*/address
check "fake-accel char device present" sh -c 'ls /dev/fake-accel* >/dev/null 2>&1'

# KUnit suites built into the kernel ran at boot; their results are in debugfs, one KTAP
# document per suite. They are printed as they are, after this test's own plan: the host
# reads them with scripts/lib/ktap.py (scripts/check: `ktap.py frame`), as kunit.SUITE.CASE.
echo "1..$n"
for r in /sys/kernel/debug/kunit/*/results; do
    [ -f "$r" ] && cat "$r"
done
echo "# devmem-lab: end smoke boot:smoke rc=0"
