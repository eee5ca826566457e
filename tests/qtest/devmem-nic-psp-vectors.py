#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""devmem-nic-psp-vectors: the PSP known-answer vectors of devmem-nic-psp-test.c,
computed by a second, independent PSP implementation (Python, on the `cryptography`
package, Debian python3-cryptography) and checked against the C header the qtest
includes (tests/qtest/devmem-lab-psp-vectors.h).

The chain of trust: published vectors -> this implementation -> the header -> the device.
1. The primitives are checked against published vectors: AES-GCM test cases 4 (AES-128)
   and 16 (AES-256) of McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)"
   (2005, the NIST GCM submission), and the AES-256 CMAC examples of NIST SP 800-38B
   (Appendix D.3; the same values as NIST's CMAC example file "AES_CMAC.pdf").
2. The PSP key derivation and packet layout follow the PSP Architecture Specification
   (https://github.com/google/psp, doc/PSP_Arch_Spec.pdf) as implemented by its
   reference tool src/psp_encrypt.c; the device keys and SPI are that repository's test
   inputs (cfg/encrypt_transport_crypt_off_256.cfg: master keys 0/1, SPI 0x9A345678).
3. The frame vectors are what Linux's psp_dev_encapsulate() hands a driver (UDP dst
   1000, checksum 0, PSP next header 6, hdrlen 1, crypt offset 0, IV 0), encrypted as
   the device's spec says (IV from REG_PSP_TX_IV, ICV appended, lengths + 16).

usage: devmem-nic-psp-vectors.py [--write | --tap]
  (default)  check: exit 0 if the primitives pass and the header equals what this
             script computes, else print the difference and exit 1
  --tap      the same, as TAP lines (scripts/check counts them)
  --write    regenerate the header
"""
import os
import struct
import sys

try:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.cmac import CMAC
    from cryptography.hazmat.primitives.ciphers import algorithms
except ImportError:
    sys.stderr.write("devmem-nic-psp-vectors: needs python3-cryptography "
                     "(apt-get install python3-cryptography, or scripts/bootstrap)\n")
    sys.exit(2)

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      'devmem-lab-psp-vectors.h')
H = bytes.fromhex


def cmac(key, msg):
    c = CMAC(algorithms.AES(key))
    c.update(msg)
    return c.finalize()


def gcm(key, nonce, aad, pt):
    """ciphertext || 16-byte tag"""
    return AESGCM(key).encrypt(nonce, pt, aad)


# 1. Published vectors for the primitives
GCM_P = H('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72'
          '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39')
GCM_A = H('feedfacedeadbeeffeedfacedeadbeefabaddad2')
GCM_IV = H('cafebabefacedbaddecaf888')
PRIMITIVES = [
    ('GCM test case 4 (AES-128)',
     lambda: gcm(H('feffe9928665731c6d6a8f9467308308'), GCM_IV, GCM_A, GCM_P),
     H('42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e'
       '21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091'
       '5bc94fbc3221a5db94fae95ae7121a47')),
    ('GCM test case 16 (AES-256)',
     lambda: gcm(H('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'),
                 GCM_IV, GCM_A, GCM_P),
     H('522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa'
       '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662'
       '76fc6ece0f4e1768cddf8853bb2d551b')),
    ('CMAC-AES-256 SP 800-38B D.3 example (empty message)',
     lambda: cmac(H('603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4'),
                  b''),
     H('028962f61b7bf89efc6b551f4667d983')),
    ('CMAC-AES-256 SP 800-38B D.3 example (16 bytes)',
     lambda: cmac(H('603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4'),
                  H('6bc1bee22e409f96e93d7e117393172a')),
     H('28a7023f452e8f82bd4bf28d8c37c35c')),
]

# 2. PSP key derivation (google/psp's test device keys and SPI)
MK = [H('34448a064292601b11a0978f56a2d34cf3fc35ede1a6bc04f8db3e5243a2b0ca'),
      H('563952565d3a78ae773ec1b779f2f2d99f4a7f53a6fbb9b07d5b71f39364d739')]
SPIS = [0x9A345678, 0x12345678]


def psp_key(spi, klen):
    out = b''
    for i in range(1, klen // 16 + 1):
        x = struct.pack('>I', i) + b'Pv' + (b'0' if klen == 16 else b'1') + b'\0' + \
            struct.pack('>I', spi) + b'\0\0' + struct.pack('>H', klen * 8)
        out += cmac(MK[spi >> 31], x)
    return out


def key_len(ver):
    return 32 if ver & 1 else 16


# 3. Frames
def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('>%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def ip4_hdr(total, proto):
    h = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, total, 0x1234, 0x4000, 64, proto,
                              0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    struct.pack_into('>H', h, 10, ~csum(bytes(h)) & 0xffff)
    return bytes(h)


def ip6_hdr(plen, nxt):
    return struct.pack('>IHBB16s16s', 0x60000000, plen, nxt, 64,
                       H('fd000000000000000000000000000001'),
                       H('fd000000000000000000000000000002'))


def tcp_seg(l3, payload):
    """inner TCP segment with a correct checksum over the outer addresses"""
    th = bytearray(struct.pack('>HHIIBBHHH', 40000, 5201, 0x01020304, 0x0a0b0c0d,
                               5 << 4, 0x18, 502, 0, 0))
    seg = bytes(th) + payload
    if l3 == 4:
        ph = bytes([10, 0, 0, 1, 10, 0, 0, 2, 0, 6]) + struct.pack('>H', len(seg))
    else:
        ph = H('fd000000000000000000000000000001' 'fd000000000000000000000000000002') + \
            struct.pack('>IxxxB', len(seg), 6)
    struct.pack_into('>H', th, 16, ~csum(ph + seg) & 0xffff)
    return bytes(th) + payload


def frame(l3, ver, spi, crypt_off, payload, sport=0xc123):
    """(plain, wire): what psp_dev_encapsulate() makes, and the encrypted frame"""
    inner = tcp_seg(l3, payload)
    psph = struct.pack('>BBBBIQ', 6, 1, crypt_off, (ver << 2) | 1, spi, 0)
    udp_len = 8 + len(psph) + len(inner)
    eth = H('525400000002' '525400000001') + (b'\x08\x00' if l3 == 4 else b'\x86\xdd')
    ip = ip4_hdr(20 + udp_len, 17) if l3 == 4 else ip6_hdr(udp_len, 17)
    plain = eth + ip + struct.pack('>HHHH', sport, 1000, udp_len, 0) + psph + inner
    return plain


def encrypt(l3, plain, key, iv):
    f = bytearray(plain)
    l3_off = 14
    l4 = l3_off + (20 if l3 == 4 else 40)
    ph = l4 + 8
    struct.pack_into('>Q', f, ph + 8, iv)
    ver = (f[ph + 3] >> 2) & 0xf
    if l3 == 4:
        f[l3_off:l3_off + 20] = ip4_hdr(struct.unpack_from('>H', f, l3_off + 2)[0] + 16, 17)
    else:
        struct.pack_into('>H', f, l3_off + 4, struct.unpack_from('>H', f, l3_off + 4)[0] + 16)
    struct.pack_into('>HH', f, l4 + 4, struct.unpack_from('>H', f, l4 + 4)[0] + 16, 0)
    aad_len = 16 + 4 * (f[ph + 2] & 0x3f) if ver < 2 else len(f) - ph
    nonce = bytes(f[ph + 4:ph + 16])
    out = gcm(key, nonce, bytes(f[ph:ph + aad_len]), bytes(f[ph + aad_len:]))
    return bytes(f[:ph + aad_len]) + out


IV0 = 0x0102030405060708
PAYLOAD = bytes((i * 7 + 3) & 0xff for i in range(200))
# (name, l3, version, SPI, crypt offset, IV register)
FRAMES = [
    ('v0_ip4', 4, 0, SPIS[0], 0, IV0),
    ('v1_ip4', 4, 1, SPIS[0], 0, IV0 + 1),
    ('v2_ip4', 4, 2, SPIS[0], 0, IV0 + 2),
    ('v3_ip4', 4, 3, SPIS[0], 0, IV0 + 3),
    ('v1_ip6', 6, 1, SPIS[1], 0, IV0 + 4),
    ('v0_ip4_coff1', 4, 0, SPIS[1], 1, IV0 + 5),
]


def carray(name, data):
    lines = ['static const uint8_t %s[%d] = {' % (name, len(data))]
    for i in range(0, len(data), 12):
        lines.append('    ' + ' '.join('0x%02x,' % b for b in data[i:i + 12]))
    lines.append('};')
    return '\n'.join(lines)


def header():
    out = ['/* SPDX-License-Identifier: GPL-2.0-or-later */',
           '/*',
           ' * PSP known-answer vectors for devmem-nic-psp-test.c.  GENERATED by',
           ' * tests/qtest/devmem-nic-psp-vectors.py --write (an independent Python',
           ' * implementation on python3-cryptography, whose primitives it checks',
           ' * against published GCM and CMAC vectors); do not edit.  Sources: see',
           ' * that script.',
           ' */',
           '#ifndef DEVMEM_NIC_PSP_VECTORS_H',
           '#define DEVMEM_NIC_PSP_VECTORS_H',
           '',
           '/* device keys 0 and 1: google/psp cfg/encrypt_transport_crypt_off_256.cfg */']
    out.append(carray('psp_mk0', MK[0]))
    out.append(carray('psp_mk1', MK[1]))
    out.append('')
    out.append('#define PSP_KAT_SPI_A 0x%08xu  /* device key 1 (google/psp cfg) */' % SPIS[0])
    out.append('#define PSP_KAT_SPI_B 0x%08xu  /* device key 0 */' % SPIS[1])
    out.append('')
    out.append('/* derived keys: AES-256-CMAC counter-mode KDF */')
    for spi, tag in ((SPIS[0], 'a'), (SPIS[1], 'b')):
        out.append(carray('psp_key_%s_128' % tag, psp_key(spi, 16)))
        out.append(carray('psp_key_%s_256' % tag, psp_key(spi, 32)))
    out.append('')
    out.append('/* frames: plain = as psp_dev_encapsulate() leaves them, wire = sent */')
    rows = []
    for name, l3, ver, spi, coff, iv in FRAMES:
        plain = frame(l3, ver, spi, coff, PAYLOAD)
        wire = encrypt(l3, plain, psp_key(spi, key_len(ver)), iv)
        out.append(carray('psp_%s_plain' % name, plain))
        out.append(carray('psp_%s_wire' % name, wire))
        rows.append('    { "%s", %d, %d, 0x%08xu, %d, 0x%016xull,\n'
                    '      psp_%s_plain, sizeof(psp_%s_plain),\n'
                    '      psp_%s_wire, sizeof(psp_%s_wire) },'
                    % (name, l3, ver, spi, coff, iv, name, name, name, name))
    out.append('')
    out.append('typedef struct PspKat {')
    out.append('    const char *name;')
    out.append('    int l3;')
    out.append('    unsigned version;')
    out.append('    uint32_t spi;')
    out.append('    unsigned crypt_off;')
    out.append('    uint64_t iv;')
    out.append('    const uint8_t *plain;')
    out.append('    size_t plain_len;')
    out.append('    const uint8_t *wire;')
    out.append('    size_t wire_len;')
    out.append('} PspKat;')
    out.append('')
    out.append('static const PspKat psp_kats[] = {')
    out.extend(rows)
    out.append('};')
    out.append('')
    out.append('#endif /* DEVMEM_NIC_PSP_VECTORS_H */')
    return '\n'.join(out) + '\n'


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ''
    if mode in ('-h', '--help'):
        print(__doc__.strip())
        return 0
    if mode not in ('', '--tap', '--write'):
        sys.stderr.write('devmem-nic-psp-vectors: unknown option %s (see --help)\n' % mode)
        return 2
    results = []
    for name, fn, want in PRIMITIVES:
        results.append((fn() == want, 'primitive: ' + name))
    ok_prims = all(r[0] for r in results)
    text = header()
    if mode == '--write':
        if not ok_prims:
            sys.stderr.write('devmem-nic-psp-vectors: a primitive fails its published '
                             'vector; header not written\n')
            return 1
        with open(HEADER, 'w') as f:
            f.write(text)
        print('wrote', HEADER)
        return 0
    try:
        with open(HEADER) as f:
            have = f.read()
    except OSError as e:
        have = ''
        sys.stderr.write('devmem-nic-psp-vectors: %s\n' % e)
    results.append((have == text, 'devmem-lab-psp-vectors.h equals this implementation\'s '
                    'KDF and frame vectors'))
    if mode == '--tap':
        print('TAP version 13')
        print('1..%d' % len(results))
        for i, (ok, name) in enumerate(results, 1):
            print('%s %d %s' % ('ok' if ok else 'not ok', i, name))
    else:
        for ok, name in results:
            print('%s: %s' % ('PASS' if ok else 'FAIL', name))
    return 0 if all(r[0] for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
