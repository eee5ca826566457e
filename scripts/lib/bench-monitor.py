#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench-monitor: host side of images/guest/net-bench.

Follows the guest's output log while QEMU runs; for each 'BENCH-PHASE begin|end NAME' pair it
records QEMU's CPU time (all threads, from /proc/PID/stat) and wall time, and samples QEMU with
'perf record' (cpu-clock) so the share of CPU spent in each device model's own functions can be
reported. Writes a JSON object {phase: {wall_s, cpu_s, perf: {device: share}}} when QEMU exits.

usage: bench-monitor.py PIDFILE OUTPUT_LOG RESULT_JSON PERF_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

# Function-name patterns of each device model (self time of these functions is counted).
DEVICES = {
    'devmem-nic': re.compile(r'^(dmnic_|devmem_nic_)'),
    'fake-accel': re.compile(r'^(faccel_|fake_accel_)'),
    'virtio-net': re.compile(r'^(virtio_net_|virtqueue_|vring_|virtio_)'),
    'igb': re.compile(r'^(igb_|igb_core_)'),
}
TICK = os.sysconf('SC_CLK_TCK')


def cpu_seconds(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def perf_shares(data):
    """Share of samples per device model in a perf.data file (self time)."""
    try:
        rep = subprocess.run(['perf', 'report', '-i', data, '--stdio', '--sort', 'sym',
                              '-q', '--percent-limit', '0'], capture_output=True, text=True,
                             timeout=300).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    shares = {d: 0.0 for d in DEVICES}
    for line in rep.splitlines():
        m = re.match(r'\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)', line)
        if not m:
            continue
        for dev, pat in DEVICES.items():
            if pat.match(m.group(2)):
                shares[dev] += float(m.group(1)) / 100
                break
    return {d: round(v, 4) for d, v in shares.items()}


def main():
    if len(sys.argv) != 5 or sys.argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ('-h', '--help') else 2)
    pidfile, outlog, result, perfdir = sys.argv[1:5]
    os.makedirs(perfdir, exist_ok=True)
    use_perf = shutil.which('perf') is not None
    deadline = time.time() + 120
    while not (os.path.exists(pidfile) and open(pidfile).read().strip()):
        if time.time() > deadline:
            sys.exit('bench-monitor: QEMU did not start (no pidfile)')
        time.sleep(0.1)
    pid = int(open(pidfile).read().strip())
    while not os.path.exists(outlog):
        time.sleep(0.1)
    phases, open_phase = {}, {}
    with open(outlog, errors='replace') as f:
        buf = ''
        while True:
            chunk = f.read()
            if not chunk:
                if not os.path.exists(f'/proc/{pid}'):
                    break
                time.sleep(0.05)
                continue
            buf += chunk
            *lines, buf = buf.split('\n')
            for line in lines:
                m = re.match(r'BENCH-PHASE (begin|end) (\S+)', line.strip())
                if not m:
                    continue
                what, name = m.groups()
                try:
                    cpu = cpu_seconds(pid)
                except OSError:
                    continue
                if what == 'begin':
                    perf = None
                    if use_perf:
                        perf = subprocess.Popen(
                            ['perf', 'record', '-q', '-F', '499', '-p', str(pid), '-o',
                             os.path.join(perfdir, f'{name}.data')],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    open_phase[name] = (time.time(), cpu, perf)
                elif name in open_phase:
                    t0, c0, perf = open_phase.pop(name)
                    phases[name] = {'wall_s': round(time.time() - t0, 3),
                                    'cpu_s': round(cpu - c0, 3)}
                    if perf:
                        perf.send_signal(signal.SIGINT)
                        try:
                            perf.wait(timeout=30)
                        except subprocess.TimeoutExpired:
                            perf.kill()
    for name, ph in phases.items():
        data = os.path.join(perfdir, f'{name}.data')
        if os.path.exists(data):
            ph['perf'] = perf_shares(data)
    with open(result, 'w') as f:
        json.dump(phases, f, indent=1)


if __name__ == '__main__':
    main()
