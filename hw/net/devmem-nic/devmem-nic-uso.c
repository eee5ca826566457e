/*
 * devmem-nic UDP segmentation offload (docs/specs/devmem-nic.rst, USO).
 *
 * No QOM.  The core parses and checks the gathered super-frame; this file
 * cuts it into datagrams the way Linux __udp_gso_segment() does in
 * software: MSS payload bytes each (the last one shorter), IPv4 ID plus
 * the segment number, fresh lengths and checksums.  QEMU's net library
 * has no UDP segmentation (net_tx_pkt knows only UFO, IP fragments).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "devmem-nic-core.h"
#include "trace.h"

/* The pseudo-header sum of a UDP segment of @l4len bytes under @ip */
static uint32_t dmnic_uso_pseudo(const DmnicSegHdr *h, const uint8_t *ip,
                                 size_t l4len)
{
    uint32_t cso;

    if (h->l3 == 4) {
        struct ip_header iph;

        memcpy(&iph, ip, sizeof(iph));
        return eth_calc_ip4_pseudo_hdr_csum(&iph, l4len, &cso);
    } else {
        struct ip6_header ip6h;

        memcpy(&ip6h, ip, sizeof(ip6h));
        return eth_calc_ip6_pseudo_hdr_csum(&ip6h, l4len, IP_PROTO_UDP,
                                            &cso);
    }
}

unsigned devmem_nic_uso_segs(size_t pay, size_t mss)
{
    return pay ? DIV_ROUND_UP(pay, mss) : 1;
}

void devmem_nic_uso_segment(const uint8_t *buf, size_t len,
                            const DmnicSegHdr *h, uint8_t *sb,
                            DmnicSegSend send, void *opaque,
                            uint32_t *nseg, uint64_t *wire)
{
    size_t hlen = h->l4_off + sizeof(struct udp_header);
    size_t pay = len - hlen, off = 0;
    unsigned i, n = devmem_nic_uso_segs(pay, h->mss);
    uint16_t ip_id = 0;

    /* the core checked: UDP header inside, MSS >= TSO_MSS_MIN */
    assert(hlen <= len && h->mss >= DMNIC_TSO_MSS_MIN);
    if (h->l3 == 4) {
        ip_id = lduw_be_p(buf + h->l3_off + offsetof(struct ip_header, ip_id));
    }
    *nseg = 0;
    *wire = 0;
    /* at most 65535 / DMNIC_TSO_MSS_MIN = 1024 rounds */
    for (i = 0; i < n; i++, off += h->mss) {
        size_t seg = MIN(h->mss, pay - off);
        uint8_t *ip = sb + h->l3_off;
        uint8_t *udp = sb + h->l4_off;
        size_t udplen = sizeof(struct udp_header) + seg;
        uint16_t csum;

        memcpy(sb, buf, hlen);
        memcpy(sb + hlen, buf + hlen + off, seg);
        if (h->l3 == 4) {
            size_t ihl = IP_HDR_GET_LEN(ip);

            stw_be_p(ip + offsetof(struct ip_header, ip_len),
                     hlen - h->l3_off + seg);
            stw_be_p(ip + offsetof(struct ip_header, ip_id),
                     (uint16_t)(ip_id + i));
            stw_be_p(ip + offsetof(struct ip_header, ip_sum), 0);
            stw_be_p(ip + offsetof(struct ip_header, ip_sum),
                     net_raw_checksum(ip, ihl));
        } else {
            stw_be_p(ip + offsetof(struct ip6_header, ip6_plen),
                     hlen - h->l3_off - sizeof(struct ip6_header) + seg);
        }
        stw_be_p(udp + offsetof(struct udp_header, uh_ulen), udplen);
        stw_be_p(udp + offsetof(struct udp_header, uh_sum), 0);
        csum = devmem_nic_csum_fold(devmem_nic_csum_add(
                   dmnic_uso_pseudo(h, ip, udplen), udp, udplen));
        /* 0 means "no checksum": the complement 0 goes out as 0xffff */
        stw_be_p(udp + offsetof(struct udp_header, uh_sum),
                 net_checksum_finish_nozero(csum));
        send(opaque, sb, hlen + seg);
        (*nseg)++;
        *wire += hlen + seg;
    }
    trace_devmem_nic_uso(h->l3, len, h->mss, *nseg);
}
