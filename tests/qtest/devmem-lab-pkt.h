/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-lab qtest helpers: Ethernet frame builder and socket netdev I/O.
 */
#ifndef DEVMEM_LAB_PKT_H
#define DEVMEM_LAB_PKT_H

#define DL_PROTO_TCP    6
#define DL_PROTO_UDP    17

typedef struct DlPktSpec {
    int l3;                 /* 4, 6, or 0 for a non-IP (ARP-like) frame */
    int l4;                 /* DL_PROTO_TCP, DL_PROTO_UDP or another proto */
    uint8_t saddr[16];
    uint8_t daddr[16];
    uint16_t sport;
    uint16_t dport;
    size_t payload_len;
    int vlan_tags;          /* 0..2 */
    uint16_t vlan_tci;
    size_t ip4_opt_len;     /* multiple of 4, <= 40 */
    int ip6_ext_hdrs;       /* number of 8-byte Destination Options hdrs */
    bool ip6_ah;            /* a 24-byte AH before them */
    uint32_t ip6_flow_label; /* IPv6 flow label, low 20 bits used */
    size_t tcp_opt_len;     /* multiple of 4, <= 40 */
    bool bad_l3_csum;
    bool bad_l4_csum;
    bool ip4_frag;          /* set the IPv4 MF flag */
    uint8_t payload_seed;
} DlPktSpec;

/*
 * Builds the frame described by @spec into @buf (at least 14 + 60 + 60 +
 * 8 + payload_len bytes).  Returns the frame length; *@hdr_len (if not
 * NULL) receives the offset of the first L4 payload byte.
 */
size_t dl_pkt_build(const DlPktSpec *spec, uint8_t *buf, size_t *hdr_len);

/* Fill a spec with defaults: 10.0.0.1:1000 -> 10.0.0.2:2000 TCP/IPv4 */
void dl_pkt_default(DlPktSpec *spec, int l3, int l4, size_t payload_len);

/* Sets an IPv4 address (a.b.c.d) in a 16-byte address field */
void dl_ip4(uint8_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d);

/* Ones' complement helpers */
uint32_t dl_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t dl_csum_fold(uint32_t sum);

/* Whether the L4 checksum of an IPv4/IPv6 TCP/UDP frame is correct */
bool dl_pkt_l4_csum_ok(const uint8_t *frame, size_t len);

/* Socket netdev framing: 4-byte big endian length, then the frame */
void dl_sock_send(int fd, const uint8_t *frame, size_t len);
/* Returns the frame length, or -1 if nothing arrived within timeout_ms */
ssize_t dl_sock_recv(int fd, uint8_t *buf, size_t size, int timeout_ms);

#endif /* DEVMEM_LAB_PKT_H */
