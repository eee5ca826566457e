#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench-report: turn scripts/bench's raw figures into bench.json, bench.txt and bench.png.

usage: bench-report.py OUT_DIR TIMINGS_TSV "ACCELS"
Reads OUT_DIR/times.tsv (name, accel, seconds), OUT_DIR/net.txt (the guest's BENCH lines),
OUT_DIR/monitor.json (host CPU per phase) and TIMINGS_TSV (build timings the build scripts
recorded); writes OUT_DIR/bench.json, bench.txt and, with python3-matplotlib, bench.png.
"""
import datetime
import json
import os
import platform
import re
import statistics
import sys

# Which device model's functions count as "the device" for each measurement.
DEVICE_OF = {'devmem': 'devmem-nic', 'virtio': 'virtio-net', 'igb': 'igb'}


def machine():
    model = platform.machine()
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30
    return f'{platform.node()}: {os.cpu_count()} cores, {mem:.0f} GiB, {model}'


def read_times(path):
    res = {}
    if os.path.exists(path):
        for line in open(path):
            name, accel, secs = line.rstrip('\n').split('\t')
            try:
                res.setdefault(name, {})[accel] = float(secs)
            except ValueError:
                res.setdefault(name, {})[accel] = None
    return res


def read_cold(path):
    """Latest cold build of each build dir, from the build scripts' timings.tsv."""
    cold = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.rstrip('\n').split('\t')
            if len(f) >= 6 and f[2] == 'cold':
                cold[f[1]] = {'seconds': int(f[3]), 'date': f[0], 'cores': int(f[4]),
                              'load': float(f[5])}
    return cold


def read_net(path, monitor):
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            kv = dict(re.findall(r'(\w+)=(\S+)', line))
            if 'name' in kv:
                rows[kv['name']] = kv
    for name, kv in rows.items():
        ph = monitor.get(kv.get('median_of', name))
        if not ph or 'gbps' not in kv:
            continue
        gb = int(kv.get('bytes', 0)) / 1e9
        pkts = int(kv.get('pkts', 0))
        kv['host_cpu_s'] = ph['cpu_s']
        if gb > 0:
            kv['host_cpu_s_per_gb'] = round(ph['cpu_s'] / gb, 2)
        if pkts > 0:
            kv['host_cpu_us_per_pkt'] = round(ph['cpu_s'] / pkts * 1e6, 2)
        dev = DEVICE_OF.get(kv.get('pair', ''))
        if ph.get('perf') and dev:
            share = ph['perf'].get(dev, 0)
            if kv.get('provider') == 'fake-accel':
                share += ph['perf'].get('fake-accel', 0)
            kv['device_share'] = round(share, 4)
            if gb > 0:
                kv['device_cpu_s_per_gb'] = round(ph['cpu_s'] * share / gb, 3)
            if pkts > 0:
                kv['device_cpu_us_per_pkt'] = round(ph['cpu_s'] * share / pkts * 1e6, 3)
    return rows


ROUND = re.compile(r'-r\d+$')


def round_ratios(net, num, den):
    """Gbit/s of round rN of row num over the same round of row den, for each round of
    alternated rounds (net-bench's 'NAME-rN' rows), in the rounds' order."""
    out = []
    for name, kv in net.items():
        m = re.match(rf'{re.escape(num)}-(r\d+)$', name)
        d = net.get(f'{den}-{m.group(1)}', {}) if m else {}
        if m and 'gbps' in kv and 'gbps' in d and float(d['gbps']) > 0:
            out.append(float(kv['gbps']) / float(d['gbps']))
    return out


def read_cost_gro(path):
    """{size: {'0': per frame, '1': per frame}}: hardware GRO off and on."""
    cost = {}
    if os.path.exists(path):
        for line in open(path):
            size, gro, frames, ir = line.rstrip('\n').split('\t')[:4]
            cost.setdefault(size, {})[gro] = round(int(ir) / int(frames))
    return cost


def read_cost_stream(path):
    """{size: {dir: {key: per frame}}}: rows of the PSP stream qtest under callgrind (bench's
    psp and cost): "SIZE KEY DIR FRAMES INSTRUCTIONS", KEY the PSP version or plain
    (cost-psp.tsv) or the mask of the one engine on in the plain stream (cost-engines.tsv)."""
    cost = {}
    if os.path.exists(path):
        for line in open(path):
            size, key, d, frames, ir = line.rstrip('\n').split('\t')[:5]
            cost.setdefault(size, {}).setdefault(d, {})[key] = round(int(ir) / int(frames))
    return cost


# the engine masks of cost-engines.tsv (DEVMEM_LAB_PSP_STREAM's fourth field)
ENGINES = {'1': 'RX timestamps', '2': 'pause (lossless RX)', '4': 'TX queue shaper',
           '8': 'TX timestamps'}


def read_cost(path):
    cost = {}
    if os.path.exists(path):
        for line in open(path):
            size, frames, ir, top = (line.rstrip('\n').split('\t') + [''])[:4]
            cost[size] = {'frames': int(frames), 'instructions': int(ir),
                          'per_frame': round(int(ir) / int(frames)),
                          'per_payload_byte': round(int(ir) / int(frames) / int(size), 2),
                          'top': top}
    return cost


def fmt(v, spec='.1f'):
    return '-' if v is None else format(v, spec)


def gbps_ratio(net, num, den):
    """Gbit/s of net-bench row num over row den, None when either has no figure."""
    a, b = net.get(num, {}), net.get(den, {})
    return float(a['gbps']) / float(b['gbps']) if 'gbps' in a and 'gbps' in b else None


def on_off(on, off):
    """on / off of two instruction counts as the cost tables print it."""
    return f'{on / off:.2f}' if off else '-'


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip())
        sys.exit(2)
    out, timings, accels = sys.argv[1], sys.argv[2], sys.argv[3].split()
    monitor = {}
    mpath = os.path.join(out, 'monitor.json')
    if os.path.exists(mpath):
        monitor = json.load(open(mpath))
    res = {
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='minutes'),
        'machine': machine(),
        'accels': accels,
        'time_s': read_times(os.path.join(out, 'times.tsv')),
        'cold_builds': read_cold(timings),
        'net': read_net(os.path.join(out, 'net.txt'), monitor),
        'cost': read_cost(os.path.join(out, 'cost.tsv')),
        'cost_gro': read_cost_gro(os.path.join(out, 'cost-gro.tsv')),
        'cost_psp': read_cost_stream(os.path.join(out, 'cost-psp.tsv')),
        'cost_engines': read_cost_stream(os.path.join(out, 'cost-engines.tsv')),
    }
    net = res['net']
    base = {f: float(net[f'tcp-virtio-{f}']['gbps']) for f in ('1', '4')
            if 'gbps' in net.get(f'tcp-virtio-{f}', {})}
    for name, kv in net.items():
        f = kv.get('flows', '1')
        if 'gbps' in kv and base.get(f) and name.startswith(('tcp-', 'devmem-')):
            kv['ratio_to_virtio'] = round(float(kv['gbps']) / base[f], 2)
    json.dump(res, open(os.path.join(out, 'bench.json'), 'w'), indent=1)

    L = [f"devmem-lab bench, {res['date']}, {res['machine']}, accelerators: {' '.join(accels)}"]
    if res['cold_builds'] or res['time_s']:
        L.append('')
        L.append('Time to result                         ' +
                 ''.join(f'{a:>10}' for a in accels) + '   (seconds)')
        for comp, c in sorted(res['cold_builds'].items()):
            L.append(f'  cold build {comp:<26} {c["seconds"]:>10}   '
                     f'(recorded {c["date"][:16]}, {c["cores"]} cores, load {c["load"]} at the end)')
        names = [('cold_build_qemu', 'cold build: qemu (now)'),
                 ('cold_build_kernel', 'cold build: kernel (now)'),
                 ('cold_build_image', 'cold build: image (now)'),
                 ('warm_build', "warm 'make build'"),
                 ('warm_make_run', "warm 'make run'"),
                 ('boot_to_shell', 'boot to shell and back'),
                 ('devmem_py', 'devmem.py'),
                 ('edit_device_rebuild', 'edit device file: rebuild'),
                 ('edit_device_rerun', '  ... + devmem.py'),
                 ('edit_driver_rebuild', 'edit driver file: rebuild'),
                 ('edit_driver_rerun', '  ... + devmem.py')]
        for key, label in names:
            t = res['time_s'].get(key)
            if not t:
                continue
            if '-' in t:
                L.append(f'  {label:<37}{fmt(t["-"]):>10}')
            else:
                L.append(f'  {label:<37}' + ''.join(f'{fmt(t.get(a)):>10}' for a in accels))
    if net:
        L.append('')
        L.append('Data path (peer -> dut unless TX)  Gbit/s  x virtio   kpps  '
                 'host CPU s/GB  us/pkt  device share  device us/pkt')
        for name, kv in net.items():
            if ROUND.search(name):
                continue
            if 'error' in kv:
                L.append(f'  {name:<32} error: {kv["error"]}')
                continue
            L.append(f'  {name:<32} {float(kv["gbps"]):6.3f} {fmt(kv.get("ratio_to_virtio"), ".2f"):>9}'
                     f' {int(kv.get("pps", 0)) / 1000:6.1f} {fmt(kv.get("host_cpu_s_per_gb")):>14}'
                     f' {fmt(kv.get("host_cpu_us_per_pkt")):>7}'
                     f' {fmt(kv.get("device_share") and kv["device_share"] * 100, ".1f"):>12}%'
                     f' {fmt(kv.get("device_cpu_us_per_pkt"), ".2f"):>14}')
        med = gbps_ratio(net, 'devmem-rx-fake-accel', 'devmem-rx-udmabuf')
        if med is not None:
            # Rounds alternate the two memories, so each round's ratio sees the same machine
            # state; the median of those is the figure, the ratio of the medians is shown too.
            pairs = round_ratios(net, 'devmem-rx-fake-accel', 'devmem-rx-udmabuf')
            line = '  devmem RX into accelerator memory / into udmabuf: '
            if pairs:
                line += (f'{statistics.median(pairs):.2f} (median of the per-round ratios '
                         f'{", ".join(f"{r:.2f}" for r in pairs)}; ratio of the medians '
                         f'{med:.2f})')
            else:
                line += f'{med:.2f}'
            L.append(line)
        r = gbps_ratio(net, 'tcp-devmem-1', 'tcp-igb-1')
        if r is not None:
            L.append(f'  devmem-nic normal RX / igb (1 flow): {r:.2f}')
        for mode, what in (('grohw', 'hardware GRO on'), ('lro', 'LRO on')):
            for f in ('1', '4'):
                r = gbps_ratio(net, f'tcp-devmem-{mode}-{f}', f'tcp-devmem-{f}')
                if r is not None:
                    L.append(f'  devmem-nic normal RX, {what} / off ({f} flow'
                             f'{"s" if f != "1" else ""}): {r:.2f}')
        for mem in ('udmabuf', 'fake-accel'):
            r = gbps_ratio(net, f'devmem-rx-{mem}-grohw-on', f'devmem-rx-{mem}-grohw-off')
            if r is not None:
                L.append(f'  devmem RX into {mem}, hardware GRO on / off (medians of alternated '
                         f'rounds; target >= 1.5): {r:.2f}')
    if res['cost']:
        L.append('')
        L.append('devmem-nic model, host instructions per received frame (callgrind, '
                 'inside devmem_nic_core_receive)')
        L.append('  payload bytes   per frame   per payload byte   top functions (self)')
        for size, c in res['cost'].items():
            L.append(f'  {size:>13} {c["per_frame"]:>11} {c["per_payload_byte"]:>18}   '
                     f'{c["top"].replace(",", ", ")}')
    if res.get('cost_gro'):
        L.append('')
        L.append('devmem-nic model, one TCP flow: host instructions per received frame, '
                 'hardware GRO off / on')
        L.append('  payload bytes   GRO off   GRO on   on/off')
        for size, c in res['cost_gro'].items():
            off, on = c.get('0', 0), c.get('1', 0)
            L.append(f'  {size:>13} {off:>9} {on:>8} {on_off(on, off):>8}')
    if res.get('cost_psp'):
        L.append('')
        L.append('devmem-nic model, a TCP stream device A -> B: host instructions per frame of '
                 "A's TX (dmnic_tx_bh) and B's RX (devmem_nic_core_receive), plain / PSP")
        L.append('  payload bytes  dir     plain   PSP v0 (GCM-128)   PSP v1 (GCM-256)')
        for size, c in res['cost_psp'].items():
            for d in ('rx', 'tx'):
                v = c.get(d, {})
                pl = v.get('plain', 0)

                def cell(x):
                    return f'{x} ({x / pl:.1f}x)' if x and pl else str(x or '-')
                L.append(f'  {size:>13}  {d:<3} {pl:>9} {cell(v.get("0")):>18} {cell(v.get("1")):>18}')
    if res.get('cost_engines'):
        L.append('')
        L.append('devmem-nic model, the same plain stream with one engine on: host instructions '
                 'per frame, off (plain) / on')
        L.append('  payload bytes  engine                dir       off        on   on/off')
        for size, c in res['cost_engines'].items():
            for d, engines in c.items():
                off = res.get('cost_psp', {}).get(size, {}).get(d, {}).get('plain', 0)
                for eng, per in engines.items():
                    L.append(f'  {size:>13}  {ENGINES.get(eng, f"mask {eng}"):<21} {d:<3} '
                             f'{off or "-":>9} {per:>9} {on_off(per, off):>8}')
    for d in ('rx', 'tx'):
        ratios = round_ratios(net, f'psp-{d}-v0', f'psp-{d}-plain')
        if ratios:
            L.append(f'  devmem {d.upper()} over PSP v0 / without PSP: {statistics.median(ratios):.2f} '
                     f'(median of the per-round ratios {", ".join(f"{r:.2f}" for r in ratios)})')
    txt = '\n'.join(L) + '\n'
    open(os.path.join(out, 'bench.txt'), 'w').write(txt)
    print(txt, end='')
    plot(out, res)
    print(f'results: {out}/bench.json, {out}/bench.txt')


def plot(out, res):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('plot: skipped (python3-matplotlib not installed)')
        return
    net = res['net']
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    main_rows = [n for n in net if 'gbps' in net[n] and not ROUND.search(n) and
                 (n.startswith('tcp-') or n.startswith('devmem-'))]
    ax = axes[0]
    ax.barh(main_rows[::-1], [float(net[n]['gbps']) for n in main_rows[::-1]], color='tab:blue')
    ax.set_xlabel('Gbit/s')
    ax.set_title('Throughput, one guest')
    ax = axes[1]
    q = [n for n in net if n.startswith('queues-') and 'gbps' in net[n]]
    if q:
        ax.plot([int(net[n]['queues']) for n in q], [float(net[n]['gbps']) for n in q], 'o-')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('combined channels (8 flows)')
        ax.set_ylabel('Gbit/s')
        ax.set_title('devmem-nic: queue scaling')
        ax.set_ylim(bottom=0)
    ax = axes[2]
    for mtu in ('1500', '9000'):
        s = [n for n in net if n.startswith(f'size-{mtu}-') and 'host_cpu_us_per_pkt' in net[n]]
        if s:
            ax.plot([int(net[n]['write']) for n in s], [net[n]['host_cpu_us_per_pkt'] for n in s],
                    'o-', label=f'MTU {mtu}')
    ax.set_xscale('log', base=2)
    ax.set_xlabel('write size, bytes')
    ax.set_ylabel('host CPU us per received packet')
    ax.set_title('devmem-nic: cost vs size')
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    fig.suptitle(f"devmem-lab bench {res['date'][:10]} ({'/'.join(res['accels'])}, "
                 f"{res['machine'].split(':')[0]})")
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'bench.png'), dpi=90)
    print(f'plot: {out}/bench.png')


if __name__ == '__main__':
    main()
