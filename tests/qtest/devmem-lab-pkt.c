/*
 * devmem-lab qtest helpers: Ethernet frame builder and socket netdev I/O.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <poll.h>
#include "devmem-lab-pkt.h"

static const uint8_t dl_dst_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t dl_src_mac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

uint32_t dl_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    return sum;
}

uint16_t dl_csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

void dl_ip4(uint8_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    addr[0] = a;
    addr[1] = b;
    addr[2] = c;
    addr[3] = d;
}

void dl_pkt_default(DlPktSpec *spec, int l3, int l4, size_t payload_len)
{
    int i;

    memset(spec, 0, sizeof(*spec));
    spec->l3 = l3;
    spec->l4 = l4;
    spec->payload_len = payload_len;
    spec->sport = 1000;
    spec->dport = 2000;
    spec->payload_seed = 0x11;
    if (l3 == 6) {
        for (i = 0; i < 16; i++) {
            spec->saddr[i] = 0x20 + i;
            spec->daddr[i] = 0x40 + i;
        }
        spec->saddr[0] = 0xfd;
        spec->daddr[0] = 0xfd;
    } else {
        dl_ip4(spec->saddr, 10, 0, 0, 1);
        dl_ip4(spec->daddr, 10, 0, 0, 2);
    }
}

static uint32_t dl_pseudo(int l3, const uint8_t *s, const uint8_t *d,
                          int proto, size_t l4len)
{
    size_t alen = l3 == 6 ? 16 : 4;
    uint32_t sum = dl_csum_add(0, s, alen);

    sum = dl_csum_add(sum, d, alen);
    return sum + proto + l4len;
}

size_t dl_pkt_build(const DlPktSpec *spec, uint8_t *buf, size_t *hdr_len)
{
    size_t off = 12, ip_off, l4_off, l4_hlen = 0, pay_off, i;
    uint16_t et = spec->l3 == 6 ? 0x86dd : spec->l3 == 4 ? 0x0800 : 0x0806;
    uint8_t *ip, *l4;
    int t;

    memcpy(buf, dl_dst_mac, 6);
    memcpy(buf + 6, dl_src_mac, 6);
    for (t = 0; t < spec->vlan_tags; t++) {
        stw_be_p(buf + off, (spec->vlan_tags == 2 && t == 0) ? 0x88a8 :
                                                             0x8100);
        stw_be_p(buf + off + 2, spec->vlan_tci + t);
        off += 4;
    }
    stw_be_p(buf + off, et);
    off += 2;
    ip_off = off;
    ip = buf + ip_off;

    if (!spec->l3) {
        /* an ARP-sized opaque frame padded to the payload length */
        for (i = 0; i < 28 + spec->payload_len; i++) {
            buf[off + i] = spec->payload_seed + i;
        }
        if (hdr_len) {
            *hdr_len = 0;
        }
        return off + 28 + spec->payload_len;
    }

    if (spec->l3 == 4) {
        size_t ihl = 20 + spec->ip4_opt_len;

        memset(ip, 0, ihl);
        ip[0] = 0x40 | (ihl / 4);
        stw_be_p(ip + 4, 0x1234);
        stw_be_p(ip + 6, spec->ip4_frag ? 0x2000 : 0x4000);
        ip[8] = 64;
        ip[9] = spec->l4;
        memcpy(ip + 12, spec->saddr, 4);
        memcpy(ip + 16, spec->daddr, 4);
        memset(ip + 20, 0x01, spec->ip4_opt_len);    /* NOPs */
        l4_off = ip_off + ihl;
    } else {
        size_t pos = ip_off + 40;
        uint8_t *nxt = ip + 6;      /* the next-header field to fill */
        int n;

        memset(ip, 0, 40);
        ip[0] = 0x60;
        ip[1] = (spec->ip6_flow_label >> 16) & 0x0f;
        ip[2] = spec->ip6_flow_label >> 8;
        ip[3] = spec->ip6_flow_label;
        ip[7] = 64;
        memcpy(ip + 8, spec->saddr, 16);
        memcpy(ip + 24, spec->daddr, 16);
        if (spec->ip6_ah) {
            uint8_t *e = buf + pos;

            /* AH, 12-byte ICV: length in 4-byte units minus 2 (RFC 4302) */
            *nxt = 51;
            memset(e, 0, 24);
            e[1] = 24 / 4 - 2;
            stl_be_p(e + 4, 0x1000);        /* SPI */
            stl_be_p(e + 8, 1);             /* sequence number */
            nxt = e;
            pos += 24;
        }
        for (n = 0; n < spec->ip6_ext_hdrs; n++) {
            uint8_t *e = buf + pos;

            *nxt = 60;
            e[1] = 0;
            e[2] = 0x01;    /* PadN, 4 bytes */
            e[3] = 4;
            memset(e + 4, 0, 4);
            nxt = e;
            pos += 8;
        }
        *nxt = spec->l4;
        l4_off = pos;
    }

    l4 = buf + l4_off;
    if (spec->l4 == DL_PROTO_TCP) {
        l4_hlen = 20 + spec->tcp_opt_len;
        memset(l4, 0, l4_hlen);
        stw_be_p(l4, spec->sport);
        stw_be_p(l4 + 2, spec->dport);
        stl_be_p(l4 + 4, 0x01020304);
        stl_be_p(l4 + 8, 0x0a0b0c0d);
        l4[12] = (l4_hlen / 4) << 4;
        l4[13] = 0x18;
        stw_be_p(l4 + 14, 0xffff);
        memset(l4 + 20, 0x01, spec->tcp_opt_len);
    } else if (spec->l4 == DL_PROTO_UDP) {
        l4_hlen = 8;
        memset(l4, 0, 8);
        stw_be_p(l4, spec->sport);
        stw_be_p(l4 + 2, spec->dport);
        stw_be_p(l4 + 4, 8 + spec->payload_len);
    }
    pay_off = l4_off + l4_hlen;
    for (i = 0; i < spec->payload_len; i++) {
        buf[pay_off + i] = spec->payload_seed + i * 7 + (i >> 8);
    }

    /* lengths and checksums */
    if (spec->l3 == 4) {
        size_t ihl = 20 + spec->ip4_opt_len;
        uint16_t c;

        stw_be_p(ip + 2, pay_off + spec->payload_len - ip_off);
        c = ~dl_csum_fold(dl_csum_add(0, ip, ihl));
        stw_be_p(ip + 10, spec->bad_l3_csum ? c ^ 0x5a5a : c);
    } else {
        stw_be_p(ip + 4, pay_off + spec->payload_len - ip_off - 40);
    }
    if (spec->l4 == DL_PROTO_TCP || spec->l4 == DL_PROTO_UDP) {
        size_t l4len = l4_hlen + spec->payload_len;
        uint32_t sum = dl_pseudo(spec->l3, spec->saddr, spec->daddr,
                                 spec->l4, l4len);
        uint16_t c = ~dl_csum_fold(dl_csum_add(sum, l4, l4len));
        size_t coff = spec->l4 == DL_PROTO_TCP ? 16 : 6;

        if (spec->l4 == DL_PROTO_UDP && !c) {
            c = 0xffff;
        }
        stw_be_p(l4 + coff, spec->bad_l4_csum ? c ^ 0x5a5a : c);
    }
    if (hdr_len) {
        *hdr_len = pay_off;
    }
    return pay_off + spec->payload_len;
}

bool dl_pkt_l4_csum_ok(const uint8_t *frame, size_t len)
{
    size_t off = 12;
    uint16_t et = lduw_be_p(frame + off);
    const uint8_t *ip;
    int l3, proto;
    size_t l4_off, l4len;
    uint32_t sum;

    while (et == 0x8100 || et == 0x88a8) {
        off += 4;
        et = lduw_be_p(frame + off);
    }
    off += 2;
    ip = frame + off;
    if (et == 0x0800) {
        l3 = 4;
        proto = ip[9];
        l4_off = off + (ip[0] & 0xf) * 4;
        l4len = lduw_be_p(ip + 2) - (ip[0] & 0xf) * 4;
        sum = dl_pseudo(4, ip + 12, ip + 16, proto, l4len);
    } else if (et == 0x86dd) {
        l3 = 6;
        proto = ip[6];
        l4_off = off + 40;
        l4len = lduw_be_p(ip + 4);
        /* skip Hop-by-Hop, Routing, Destination Options and AH headers */
        while (proto == 0 || proto == 43 || proto == 60 || proto == 51) {
            size_t hl = proto == 51 ? (frame[l4_off + 1] + 2) * 4 :
                                      (frame[l4_off + 1] + 1) * 8;

            proto = frame[l4_off];
            l4_off += hl;
            l4len -= hl;
        }
        sum = dl_pseudo(6, ip + 8, ip + 24, proto, l4len);
    } else {
        return false;
    }
    g_assert_cmpuint(l4_off + l4len, <=, len);
    (void)l3;
    return dl_csum_fold(dl_csum_add(sum, frame + l4_off, l4len)) == 0xffff;
}

void dl_sock_send(int fd, const uint8_t *frame, size_t len)
{
    uint32_t be = cpu_to_be32(len);
    ssize_t r;

    r = send(fd, &be, sizeof(be), 0);
    g_assert_cmpint(r, ==, sizeof(be));
    r = send(fd, frame, len, 0);
    g_assert_cmpint(r, ==, len);
}

static bool dl_recv_all(int fd, void *buf, size_t len, int timeout_ms)
{
    size_t got = 0;

    while (got < len) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t r;

        if (poll(&pfd, 1, timeout_ms) <= 0) {
            return false;
        }
        r = recv(fd, (uint8_t *)buf + got, len - got, 0);
        if (r <= 0) {
            return false;
        }
        got += r;
    }
    return true;
}

ssize_t dl_sock_recv(int fd, uint8_t *buf, size_t size, int timeout_ms)
{
    uint32_t be;
    size_t len;

    if (!dl_recv_all(fd, &be, sizeof(be), timeout_ms)) {
        return -1;
    }
    len = be32_to_cpu(be);
    g_assert_cmpuint(len, <=, size);
    g_assert_true(dl_recv_all(fd, buf, len, 5000));
    return len;
}
