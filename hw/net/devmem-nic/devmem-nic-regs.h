/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic register interface: the hardware contract of
 * docs/specs/devmem-nic.rst, in C.
 *
 * Included by the QEMU model and the qtests; the Linux driver's
 * devmem_nic_regs.h must agree with it (checked by scripts/check-headers).
 * Only plain integer constants live here so that both sides compile it.
 *
 * All registers are 32 bit little endian unless noted.  Registers marked
 * "64" may also be accessed with one aligned 64-bit access (LO at the lower
 * address).  Byte offsets of in-memory structures are given as macros
 * (DMNIC_<STRUCT>_<FIELD>), all fields little endian.
 */
#ifndef HW_NET_DEVMEM_NIC_REGS_H
#define HW_NET_DEVMEM_NIC_REGS_H

/* PCI identity: 1af4:10f0-10ff is reserved for experimental devices. */
#define DMNIC_PCI_VENDOR_ID         0x1af4
#define DMNIC_PCI_DEVICE_ID         0x10f0
#define DMNIC_PCI_REVISION          0x01

/* BARs */
#define DMNIC_BAR_REGS              0       /* 64-bit MMIO, registers */
#define DMNIC_BAR_REGS_SIZE         0x40000 /* 0x10000 before CAPS_RSS_TBL512 */
#define DMNIC_BAR_MSIX              4       /* 64-bit MMIO, MSI-X table + PBA */
#define DMNIC_BAR_MSIX_SIZE         0x4000
#define DMNIC_MSIX_TABLE_OFFSET     0x0000
#define DMNIC_MSIX_PBA_OFFSET       0x2000

/* Limits */
#define DMNIC_MAX_QUEUES            72      /* `queues` property: 1..72 */
#define DMNIC_RING_SIZE_MIN         8       /* entries, power of two */
#define DMNIC_RING_SIZE_MAX         32768
#define DMNIC_NUM_FS_RULES          256
#define DMNIC_RSS_INDIR_SIZE        128
#define DMNIC_RSS_KEY_SIZE          40      /* bytes */
#define DMNIC_RSS_KEY_SIZE_MAX      52      /* 1.2: bytes, REG_RSS_KEY_SIZE */
#define DMNIC_RSS_NUM_CTX           33      /* RSS contexts, 0 = default */
#define DMNIC_RSS_NUM_CTX_V11       8       /* without CAPS_RSS_TBL512 */
#define DMNIC_RSS_TBL_SIZE          512     /* CAPS_RSS_TBL512: entries */
#define DMNIC_HDS_THRESH_MAX        65535
#define DMNIC_RX_HDR_BUF_MIN        128     /* bytes, smallest header buffer */
#define DMNIC_BUF_LEN_MAX           65536   /* bytes, any RX/TX buffer */
#define DMNIC_TX_MAX_DESC_PER_PKT   64
#define DMNIC_TX_MAX_FRAME          65535   /* bytes, gathered frame */
#define DMNIC_TSO_MAX_FRAME         131072  /* bytes, TSO super-frame */
#define DMNIC_TSO_MAX_SEG           65535   /* bytes, headers + MSS */
#define DMNIC_TSO_MSS_MIN           64      /* smallest TXD_MSS, TSO/USO */
#define DMNIC_TX_MIN_FRAME          60      /* shorter frames are padded */

/* ------------------------------------------------------------------ */
/* Global registers                                                    */
/* ------------------------------------------------------------------ */
#define DMNIC_REG_ID                0x0000  /* RO: DMNIC_ID_MAGIC */
#define DMNIC_ID_MAGIC              0x444d4e43 /* "DMNC" */
#define DMNIC_REG_VERSION           0x0004  /* RO: major << 16 | minor */
#define DMNIC_VERSION               0x00010003 /* 1.3 */
#define DMNIC_REG_NUM_QUEUES        0x0008  /* RO: number of queue pairs */
#define DMNIC_REG_CAPS              0x000c  /* RO: capability bits */
#define DMNIC_CAPS_HDS              (1u << 0)
#define DMNIC_CAPS_RX_CSUM          (1u << 1)
#define DMNIC_CAPS_TX_CSUM          (1u << 2)
#define DMNIC_CAPS_RSS              (1u << 3)
#define DMNIC_CAPS_FLOW_STEER       (1u << 4)
#define DMNIC_CAPS_TSO              (1u << 5)   /* TXD_F_TSO works */
#define DMNIC_CAPS_RSS_CTX          (1u << 6)   /* 1.1: RSS contexts */
#define DMNIC_CAPS_RSS_HFIELDS      (1u << 7)   /* 1.1: HFIELDS, SYM_XOR */
#define DMNIC_CAPS_HW_GRO           (1u << 8)   /* 1.2: GRO_CTRL_HW */
#define DMNIC_CAPS_LRO              (1u << 9)   /* 1.2: GRO_CTRL_LRO */
#define DMNIC_CAPS_RSS_FLOW_LABEL   (1u << 10)  /* 1.2: HF_IP6_FL */
#define DMNIC_CAPS_USO              (1u << 12)  /* 1.3: TXD_F_USO, Q_TX_LSO_* */
#define DMNIC_CAPS_PAUSE            (1u << 13)  /* 1.3: REG_PAUSE_* */
#define DMNIC_CAPS_FEC              (1u << 14)  /* 1.3: FEC_CTRL, G_FEC_* */
#define DMNIC_CAPS_PTP              (1u << 15)  /* 1.3: REG_PTP_*, timestamps */
#define DMNIC_REG_CTRL              0x0010  /* RW */
#define DMNIC_CTRL_RESET            (1u << 0)   /* W1: full reset, reads 0 */
#define DMNIC_REG_STATUS            0x0014  /* RO */
#define DMNIC_STATUS_LINK_UP        (1u << 0)
#define DMNIC_REG_INT_CAUSE         0x0018  /* RW1C: admin causes */
#define DMNIC_REG_INT_MASK          0x001c  /* RW: 1 = masked */
#define DMNIC_INT_LINK              (1u << 0)   /* link state changed */
#define DMNIC_INT_QERR              (1u << 1)   /* a queue entered error */
#define DMNIC_REG_MAC_LO            0x0020  /* RO: MAC bytes 0..3 */
#define DMNIC_REG_MAC_HI            0x0024  /* RO: MAC bytes 4..5 */
#define DMNIC_REG_ERR_QMAP_LO       0x0028  /* RO: queues 0..31 in error */
#define DMNIC_REG_ERR_QMAP_HI       0x002c  /* RO: queues 32..63 in error */
#define DMNIC_REG_NUM_FS_RULES      0x0030  /* RO: DMNIC_NUM_FS_RULES */
#define DMNIC_REG_RSS_INDIR_SIZE    0x0034  /* RO: DMNIC_RSS_INDIR_SIZE */
#define DMNIC_REG_RSS_NUM_CTX       0x0038  /* RO: DMNIC_RSS_NUM_CTX */
#define DMNIC_REG_ERR_QMAP_X        0x003c  /* RO: queues 64..71 in error */
#define DMNIC_REG_GRO_CTRL          0x0040  /* RW: 1.2 hardware GRO */
#define DMNIC_GRO_CTRL_HW           (1u << 0)   /* GRO-HW rules */
#define DMNIC_GRO_CTRL_LRO          (1u << 1)   /* LRO (ignored with HW) */
#define DMNIC_REG_GRO_TIMEOUT       0x0044  /* RW: queue idle time, us */
#define DMNIC_GRO_TIMEOUT_MIN       1
#define DMNIC_GRO_TIMEOUT_MAX       100000
#define DMNIC_GRO_TIMEOUT_RESET     1000
#define DMNIC_REG_GRO_NUM_CTX       0x0048  /* RO: DMNIC_GRO_NUM_CTX */
#define DMNIC_GRO_NUM_CTX           512     /* contexts per queue */
#define DMNIC_REG_GRO_MAX_SEGS      0x004c  /* RO: DMNIC_GRO_MAX_SEGS */
#define DMNIC_GRO_MAX_SEGS          64      /* segments per packet */
#define DMNIC_REG_GRO_MAX_AGE       0x0050  /* RW: context age limit, us */
#define DMNIC_GRO_MAX_AGE_MIN       1
#define DMNIC_GRO_MAX_AGE_MAX       10000000
#define DMNIC_GRO_MAX_AGE_RESET     100000
#define DMNIC_REG_RSS_KEY_SIZE      0x0060  /* RO, 1.2: key bytes (52) */
#define DMNIC_REG_RSS_TBL_SIZE      0x0064  /* RO: DMNIC_RSS_TBL_SIZE */
/* 1.3 pause frames (CAPS_PAUSE) and FEC (CAPS_FEC) */
#define DMNIC_REG_PAUSE_CTRL        0x0068  /* RW */
#define DMNIC_PAUSE_CTRL_RX         (1u << 0)   /* honour received pause */
#define DMNIC_PAUSE_CTRL_TX         (1u << 1)   /* XOFF on RX starvation */
#define DMNIC_REG_PAUSE_QUANTA      0x006c  /* RW: XOFF time, 1..65535 */
#define DMNIC_PAUSE_QUANTA_RESET    65535
#define DMNIC_PAUSE_QUANTUM_PS      51200   /* 512 bit times at 10 Gb/s */
/* A frame held for lack of RX buffers is dropped after (virtual ns) */
#define DMNIC_PAUSE_STALL_NS        100000000
#define DMNIC_REG_PAUSE_STATUS      0x0070  /* RO */
#define DMNIC_PAUSE_ST_TX_PAUSED    (1u << 0)
#define DMNIC_PAUSE_ST_XOFF         (1u << 1)
#define DMNIC_PAUSE_ST_RX_HELD      (1u << 2)   /* a frame waits for bufs */
#define DMNIC_REG_FEC_CTRL          0x0074  /* RW: FEC mode, bits 1:0 */
#define DMNIC_FEC_OFF               0
#define DMNIC_FEC_RS                1       /* RS(544,514), reset value */
#define DMNIC_FEC_CW_DATA_BITS      5140    /* data bits per codeword */
#define DMNIC_FEC_HIST_BINS         16      /* 0..15 corrected symbols */
/* 1.3 PTP clock (CAPS_PTP) */
#define DMNIC_REG_PTP_CTRL          0x0700  /* RW */
#define DMNIC_PTP_CTRL_RX_TS        (1u << 0)   /* stamp every RX packet */
#define DMNIC_PTP_CTRL_TX_TS        (1u << 1)   /* stamp TXD_F_TS packets */
#define DMNIC_REG_PTP_CMD           0x0704  /* WO */
#define DMNIC_PTP_CMD_SET           1       /* clock := PTP_ARG */
#define DMNIC_PTP_CMD_ADJ           2       /* clock += (s64)PTP_ARG */
#define DMNIC_REG_PTP_ADJ_PPB       0x0708  /* RW: s32 frequency offset */
#define DMNIC_REG_PTP_MAX_ADJ       0x070c  /* RO: DMNIC_PTP_MAX_ADJ */
#define DMNIC_PTP_MAX_ADJ           100000000 /* ppb */
#define DMNIC_REG_PTP_TIME_LO       0x0710  /* RO: samples the clock */
#define DMNIC_REG_PTP_TIME_HI       0x0714  /* RO: the sample's bits 63:32 */
#define DMNIC_REG_PTP_ARG_LO        0x0718  /* RW */
#define DMNIC_REG_PTP_ARG_HI        0x071c  /* RW */
#define DMNIC_PTP_TS_SIZE           8       /* le64 per completion entry */

/*
 * 1.3 transmit shaping (CAPS_SHAPER): token-bucket rate limiters per TX
 * queue, per group of queues and for the whole device.  RATE registers
 * are 64 bit (bits/s, 0 = unlimited): RATE_LO is latched, the RATE_HI
 * write applies the pair.  BURST is the bucket depth in bytes.
 */
#define DMNIC_CAPS_SHAPER           (1u << 18)
#define DMNIC_SHAPER_NUM_GROUPS     8
#define DMNIC_SHAPER_RATE_MAX       400000000000ull /* bits/s, 400 Gb/s */
#define DMNIC_SHAPER_BURST_MAX      16777216        /* bytes */
#define DMNIC_SHAPER_BURST_RESET    16384           /* bytes */
#define DMNIC_REG_SHAPER_NUM_GROUPS 0x0800  /* RO: DMNIC_SHAPER_NUM_GROUPS */
#define DMNIC_REG_SHAPER_NET_RATE_LO 0x0810 /* RW: device limiter */
#define DMNIC_REG_SHAPER_NET_RATE_HI 0x0814
#define DMNIC_REG_SHAPER_NET_BURST  0x0818  /* RW */
/* group limiter g (0..NUM_GROUPS-1): DMNIC_SHAPER_GRP(g) + DMNIC_SHG_* */
#define DMNIC_SHAPER_GRP_BASE       0x0840
#define DMNIC_SHAPER_GRP_STRIDE     0x10
#define DMNIC_SHAPER_GRP(g)         (DMNIC_SHAPER_GRP_BASE + \
                                     (g) * DMNIC_SHAPER_GRP_STRIDE)
#define DMNIC_SHG_RATE_LO           0x0     /* RW */
#define DMNIC_SHG_RATE_HI           0x4
#define DMNIC_SHG_BURST             0x8     /* RW */
#define DMNIC_SHG_PARENT            0xc     /* RW: 0 device, g + 1 group g */
/* queue q's limiter, room for 128 queues: DMNIC_SHAPER_Q(q) + DMNIC_SHQ_* */
#define DMNIC_SHAPER_Q_BASE         0xc000
#define DMNIC_SHAPER_Q_STRIDE       0x20
#define DMNIC_SHAPER_Q(q)           (DMNIC_SHAPER_Q_BASE + \
                                     (q) * DMNIC_SHAPER_Q_STRIDE)
#define DMNIC_SHQ_RATE_LO           0x00    /* RW */
#define DMNIC_SHQ_RATE_HI           0x04
#define DMNIC_SHQ_BURST             0x08    /* RW */
#define DMNIC_SHQ_GROUP             0x0c    /* RW: 0 none, g + 1 group g */
#define DMNIC_SHQ_WEIGHT            0x10    /* RW: stored, not scheduled */
#define DMNIC_SHQ_HELD              0x18    /* 64 RO: times held */

/* Global counters, 64 bit, RO, cleared only by reset */
#define DMNIC_REG_G_RX_FRAMES       0x0100  /* 64: frames from the cable */
#define DMNIC_REG_G_RX_DROP_RULE    0x0108  /* 64: dropped by a rule */
#define DMNIC_REG_G_RX_DROP_BADQ    0x0110  /* 64: rule/table queue >= NUM */
#define DMNIC_REG_G_RX_DROP_LINK    0x0118  /* 64: frames while link down */
#define DMNIC_REG_G_RX_RUNT         0x0120  /* 64: frames < 14 bytes */
#define DMNIC_REG_G_PAUSE_RX        0x0130  /* 64, 1.3: pause frames in */
#define DMNIC_REG_G_PAUSE_TX        0x0138  /* 64, 1.3: pause frames out */
#define DMNIC_REG_G_FEC_CORRECTED   0x0140  /* 64, 1.3: codewords fixed */
#define DMNIC_REG_G_FEC_UNCORR      0x0148  /* 64, 1.3: not fixable */
#define DMNIC_REG_G_FEC_CORR_BITS   0x0150  /* 64, 1.3: bits fixed */
#define DMNIC_REG_G_FEC_HIST(k)     (0x0180 + 8 * (k)) /* 64 */

/* RSS */
#define DMNIC_REG_RSS_CTRL          0x0200  /* RW */
#define DMNIC_RSS_CTRL_ENABLE       (1u << 0)
#define DMNIC_RSS_CTRL_SYM_XOR      (1u << 1)   /* src^dst in both fields */
#define DMNIC_RSS_CTRL_TBL512       (1u << 2)   /* 1.3: lookup hash & 511 */
#define DMNIC_REG_RSS_FIELDS        0x0204  /* RW: which packet types hash */
#define DMNIC_RSS_F_IPV4            (1u << 0)   /* src/dst addr */
#define DMNIC_RSS_F_IPV4_TCP        (1u << 1)   /* addr + ports */
#define DMNIC_RSS_F_IPV4_UDP        (1u << 2)
#define DMNIC_RSS_F_IPV6            (1u << 3)
#define DMNIC_RSS_F_IPV6_TCP        (1u << 4)
#define DMNIC_RSS_F_IPV6_UDP        (1u << 5)
#define DMNIC_RSS_F_ALL             0x3f
#define DMNIC_REG_DEFAULT_QUEUE     0x0208  /* RW: queue for unhashed frames */
#define DMNIC_REG_RSS_KEY           0x0240  /* RW: 13 regs (1.1: 10), LE */
#define DMNIC_REG_RSS_INDIR         0x0400  /* RW: 128 regs, one queue each */
#define DMNIC_RSS_INDIR_QUEUE_MASK  0xffffu
/* RW: hashed fields of hash type t (DMNIC_RSS_TYPE_IPV4..IPV6_UDP) */
#define DMNIC_REG_RSS_HFIELDS(t)    (0x0210 + 4 * ((t) - 1))
#define DMNIC_RSS_HF_IP_SRC         (1u << 0)
#define DMNIC_RSS_HF_IP_DST         (1u << 1)
#define DMNIC_RSS_HF_L4_SRC         (1u << 2)   /* TCP/UDP types only */
#define DMNIC_RSS_HF_L4_DST         (1u << 3)   /* TCP/UDP types only */
#define DMNIC_RSS_HF_IP             (DMNIC_RSS_HF_IP_SRC | DMNIC_RSS_HF_IP_DST)
#define DMNIC_RSS_HF_L4             (DMNIC_RSS_HF_L4_SRC | DMNIC_RSS_HF_L4_DST)
#define DMNIC_RSS_HF_ALL            (DMNIC_RSS_HF_IP | DMNIC_RSS_HF_L4)
#define DMNIC_RSS_HF_IP6_FL         (1u << 4)   /* 1.2: IPv6 types only */
/* RW: entries 0..127 of RSS context c (0..7); context 0 = REG_RSS_INDIR */
#define DMNIC_RSS_CTX_BASE          0xa000
#define DMNIC_RSS_CTX_STRIDE        0x200
#define DMNIC_RSS_CTX_TABLE(c)      (DMNIC_RSS_CTX_BASE + \
                                     (c) * DMNIC_RSS_CTX_STRIDE)
#define DMNIC_RSS_CTX_INDIR(c, i)   (DMNIC_RSS_CTX_TABLE(c) + 4 * (i))
/*
 * 1.3, CAPS_RSS_TBL512: the tables of all contexts, DMNIC_RSS_TBL_SIZE
 * entries each; entries 0..127 of contexts 0..7 are also the windows above
 */
#define DMNIC_RSS_TBL_BASE          0x20000
#define DMNIC_RSS_TBL_STRIDE        0x800
#define DMNIC_RSS_TBL_CTX(c)        (DMNIC_RSS_TBL_BASE + \
                                     (c) * DMNIC_RSS_TBL_STRIDE)
#define DMNIC_RSS_TBL(c, i)         (DMNIC_RSS_TBL_CTX(c) + 4 * (i))

/* RSS hash types reported in RX completions */
#define DMNIC_RSS_TYPE_NONE         0
#define DMNIC_RSS_TYPE_IPV4         1
#define DMNIC_RSS_TYPE_IPV4_TCP     2
#define DMNIC_RSS_TYPE_IPV4_UDP     3
#define DMNIC_RSS_TYPE_IPV6         4
#define DMNIC_RSS_TYPE_IPV6_TCP     5
#define DMNIC_RSS_TYPE_IPV6_UDP     6
#define DMNIC_RSS_NUM_TYPES         6       /* HFIELDS registers */

/* Flow steering rule table, indirect access */
#define DMNIC_REG_FS_INDEX          0x0600  /* RW: rule index 0..255 */
#define DMNIC_REG_FS_CMD            0x0604  /* WO: command, acts at once */
#define DMNIC_FS_CMD_WRITE          1       /* data regs -> rule[INDEX] */
#define DMNIC_FS_CMD_READ           2       /* rule[INDEX] -> data regs */
#define DMNIC_FS_CMD_CLEAR_ALL      3       /* invalidate every rule */
#define DMNIC_REG_FS_CTRL           0x0608  /* RW data: rule control */
#define DMNIC_FS_CTRL_VALID         (1u << 0)
#define DMNIC_FS_CTRL_IPV6          (1u << 1)   /* 0: IPv4, 1: IPv6 */
#define DMNIC_FS_CTRL_L4_SHIFT      4
#define DMNIC_FS_CTRL_L4_MASK       (3u << 4)
#define DMNIC_FS_L4_ANY             0       /* any protocol, ports ignored */
#define DMNIC_FS_L4_TCP             1
#define DMNIC_FS_L4_UDP             2
#define DMNIC_REG_FS_ACTION         0x060c  /* RW data */
#define DMNIC_FS_ACTION_QUEUE_MASK  0xffffu
#define DMNIC_FS_ACTION_DROP        (1u << 31)
#define DMNIC_FS_ACTION_RSS         (1u << 30)  /* 1.1: to an RSS context */
#define DMNIC_FS_ACTION_CTX_SHIFT   16          /* context, with ACTION_RSS */
#define DMNIC_FS_ACTION_CTX_MASK    (0xffu << 16)
#define DMNIC_REG_FS_PORTS          0x0610  /* RW data: src 15:0, dst 31:16 */
#define DMNIC_REG_FS_PORTS_MASK     0x0614  /* RW data: same layout */
#define DMNIC_REG_FS_SRC_IP         0x0620  /* RW data: 4 regs, word n */
#define DMNIC_REG_FS_SRC_IP_MASK    0x0630  /* RW data: 4 regs */
#define DMNIC_REG_FS_DST_IP         0x0640  /* RW data: 4 regs */
#define DMNIC_REG_FS_DST_IP_MASK    0x0650  /* RW data: 4 regs */

/*
 * PSP inline crypto (CAPS_PSP): docs/specs/devmem-nic.rst, PSP.  Global
 * registers 0x0080..0x00ff, per-queue counters 0x1b0..0x1cf, TXD bytes
 * 0x16..0x1f, RXC flag bits 24..27.
 */
#define DMNIC_CAPS_PSP              (1u << 16)
#define DMNIC_CAPS_TSO_IPXIP        (1u << 17)  /* 1.3: TSO of IP-in-IP */
#define DMNIC_CAPS_TSO_TNL          (1u << 19)  /* 1.3: UDP/GRE tunnel TSO */
#define DMNIC_CAPS_RSS_TBL512       (1u << 20)  /* 1.3: RSS_TBL, 33 contexts */
#define DMNIC_PSP_UDP_PORT          1000
#define DMNIC_PSP_HDR_LEN           16      /* PSP header without options */
#define DMNIC_PSP_ENCAP_LEN         24      /* UDP + PSP header */
#define DMNIC_PSP_ICV_LEN           16      /* trailer */
#define DMNIC_PSP_NUM_VERSIONS      4
#define DMNIC_PSP_V_GCM_128         0       /* hdr0-aes-gcm-128 */
#define DMNIC_PSP_V_GCM_256         1       /* hdr0-aes-gcm-256 */
#define DMNIC_PSP_V_GMAC_128        2       /* hdr0-aes-gmac-128 */
#define DMNIC_PSP_V_GMAC_256        3       /* hdr0-aes-gmac-256 */
#define DMNIC_PSP_SPI_PHASE         (1u << 31)  /* selects the device key */
#define DMNIC_PSP_SPI_ID_MASK       0x7fffffffu
#define DMNIC_PSP_KEY_WORDS         8       /* PSP_KEY registers */
#define DMNIC_PSP_TX_SA_NUM         4096
#define DMNIC_REG_PSP_CTRL          0x0080  /* RW: bit v = version v on */
#define DMNIC_PSP_CTRL_VERSIONS     0xfu
#define DMNIC_REG_PSP_CMD           0x0084  /* WO: command, acts at once */
#define DMNIC_PSP_CMD_ROTATE        1       /* new device key, flip phase */
#define DMNIC_PSP_CMD_DERIVE        2       /* key of SPI, VERSION -> KEY */
#define DMNIC_PSP_CMD_SA_WRITE      3       /* SPI, VERSION, KEY -> SA */
#define DMNIC_PSP_CMD_SA_CLEAR      4       /* SA[SA_INDEX] invalid */
#define DMNIC_PSP_CMD_KEY_LOAD      5       /* KEY -> device key SPI[31] */
#define DMNIC_REG_PSP_STATUS        0x0088  /* RO */
#define DMNIC_PSP_STATUS_PHASE      (1u << 0)   /* phase of new SPIs */
#define DMNIC_PSP_STATUS_KEY0       (1u << 1)   /* device key 0 valid */
#define DMNIC_PSP_STATUS_KEY1       (1u << 2)   /* device key 1 valid */
#define DMNIC_PSP_STATUS_GEN0_SHIFT 8       /* [10:8] generation, key 0 */
#define DMNIC_PSP_STATUS_GEN1_SHIFT 12      /* [14:12] generation, key 1 */
#define DMNIC_PSP_STATUS_GEN_MASK   0x7u
#define DMNIC_PSP_STATUS_RES_SHIFT  24      /* [31:24] last command result */
#define DMNIC_PSP_RES_OK            0
#define DMNIC_PSP_RES_BAD_CMD       1
#define DMNIC_PSP_RES_BAD_ARG       2   /* version, SPI or SA index */
#define DMNIC_PSP_RES_NO_KEY        3   /* the SPI's device key not valid */
#define DMNIC_PSP_RES_NO_CRYPTO     4   /* crypto library refused */
#define DMNIC_REG_PSP_SPI           0x008c  /* RW: command argument */
#define DMNIC_REG_PSP_VERSION       0x0090  /* RW: command argument, 0..3 */
#define DMNIC_REG_PSP_SA_INDEX      0x0094  /* RW: command argument */
#define DMNIC_REG_PSP_SA_NUM        0x0098  /* RO: DMNIC_PSP_TX_SA_NUM */
#define DMNIC_REG_PSP_KEY           0x00a0  /* RW: 8 regs, key[4n..4n+3] LE */
#define DMNIC_REG_PSP_TX_IV         0x00c0  /* 64 RW: IV of the next frame */
/* PSP global counters, 64 bit, RO, cleared only by reset */
#define DMNIC_REG_G_PSP_RX_AUTH_FAIL 0x00c8 /* 64: ICV mismatch */
#define DMNIC_REG_G_PSP_RX_ERROR    0x00d0  /* 64: length/framing errors */
#define DMNIC_REG_G_PSP_RX_BAD      0x00d8  /* 64: version, SPI, no key */
#define DMNIC_REG_G_PSP_TX_ERROR    0x00e0  /* 64: PSP TX frames dropped */
/* PSP per-queue counters (64 bit) */
#define DMNIC_Q_PSP_RX_PACKETS      0x1b0   /* decrypted, to this queue */
#define DMNIC_Q_PSP_RX_BYTES        0x1b8   /* after IV to end of payload */
#define DMNIC_Q_PSP_TX_PACKETS      0x1c0   /* encrypted, sent */
#define DMNIC_Q_PSP_TX_BYTES        0x1c8
/* TX descriptor PSP fields (SOP descriptor only) */
#define DMNIC_TXD_PSP_FLAGS         0x16    /* le16 */
#define DMNIC_TXD_PSP_F_EN          (1u << 0)   /* encrypt with TXD_PSP_SA */
#define DMNIC_TXD_PSP_SA            0x18    /* le32 TX SA index */
#define DMNIC_TXD_TNL_INNER         0x1c    /* le16 1.3, TSO: inner IP offset */
#define DMNIC_TXD_PSP_RSVD          0x1e    /* le16 reserved, 0 */
/* RX completion PSP flags */
#define DMNIC_RXC_F_PSP             (1u << 24)  /* decrypted, ICV good */
#define DMNIC_RXC_F_PSP_GEN_SHIFT   25          /* [27:25] key generation */
#define DMNIC_RXC_F_PSP_GEN_MASK    (7u << 25)

/* ------------------------------------------------------------------ */
/* Per-queue-pair registers: DMNIC_Q_BASE + q * DMNIC_Q_STRIDE + off   */
/* ------------------------------------------------------------------ */
#define DMNIC_Q_BASE                0x1000
#define DMNIC_Q_STRIDE              0x200
#define DMNIC_QREG(q, off)  (DMNIC_Q_BASE + (q) * DMNIC_Q_STRIDE + (off))

#define DMNIC_Q_CTRL                0x000   /* RW */
#define DMNIC_Q_CTRL_RX_ENABLE      (1u << 0)
#define DMNIC_Q_CTRL_TX_ENABLE      (1u << 1)
#define DMNIC_Q_CTRL_HDS_ENABLE     (1u << 2)
#define DMNIC_Q_STATUS              0x004   /* RO */
#define DMNIC_Q_STATUS_RX_QUIESCED  (1u << 0)
#define DMNIC_Q_STATUS_TX_QUIESCED  (1u << 1)
#define DMNIC_Q_STATUS_RX_ERROR     (1u << 2)
#define DMNIC_Q_STATUS_TX_ERROR     (1u << 3)
#define DMNIC_Q_STATUS_RX_ERR_SHIFT 8       /* RX error code [15:8] */
#define DMNIC_Q_STATUS_TX_ERR_SHIFT 16      /* TX error code [23:16] */
#define DMNIC_Q_STATUS_ERR_MASK     0xffu
#define DMNIC_Q_HDS_THRESH          0x008   /* RW: 0..DMNIC_HDS_THRESH_MAX */
#define DMNIC_Q_INT_CAUSE           0x00c   /* RW1C */
#define DMNIC_Q_INT_MASK            0x010   /* RW: 1 = masked */
#define DMNIC_Q_INT_RX              (1u << 0)   /* RX completion written */
#define DMNIC_Q_INT_TX              (1u << 1)   /* TX completion written */

/* Queue error codes (Q_STATUS RX/TX error fields) */
#define DMNIC_QERR_NONE             0
#define DMNIC_QERR_BAD_RING         1   /* base unaligned / size invalid */
#define DMNIC_QERR_BAD_INDEX        2   /* tail/head written >= ring size */
#define DMNIC_QERR_BAD_DESC         3   /* len 0 or > BUF_LEN_MAX, bad flags */
#define DMNIC_QERR_BUF_TOO_SMALL    4   /* header buffer < RX_HDR_BUF_MIN */
#define DMNIC_QERR_DMA              5   /* a DMA access failed */
#define DMNIC_QERR_TX_TOO_LONG      6   /* > 64 descriptors or > MAX_FRAME */

/*
 * Ring register blocks inside the queue block.  Each ring has
 * BASE_LO/HI (64-bit bus address, 64-byte aligned), SIZE (entries, power
 * of two 8..32768), DRV (index written by the driver: tail of a posting
 * ring, head of a completion ring) and DEV (RO index maintained by the
 * device: head of a posting ring, tail of a completion ring).
 */
#define DMNIC_Q_HBR                 0x020   /* RX header-buffer ring */
#define DMNIC_Q_PBR                 0x040   /* RX payload-buffer ring */
#define DMNIC_Q_RXC                 0x060   /* RX completion ring */
#define DMNIC_Q_TXD                 0x080   /* TX descriptor ring */
#define DMNIC_Q_TXC                 0x0a0   /* TX completion ring */
#define DMNIC_RING_BASE_LO          0x00
#define DMNIC_RING_BASE_HI          0x04
#define DMNIC_RING_SIZE             0x08
#define DMNIC_RING_DRV              0x0c
#define DMNIC_RING_DEV              0x10
#define DMNIC_RING_BASE_ALIGN       64
/* 1.3: timestamp arrays (CAPS_PTP), one le64 per RXC / TXC entry */
#define DMNIC_Q_RXTS_LO             0x0e0   /* RW, 8-byte aligned */
#define DMNIC_Q_RXTS_HI             0x0e4
#define DMNIC_Q_TXTS_LO             0x0e8
#define DMNIC_Q_TXTS_HI             0x0ec

/* Per-queue counters, 64 bit, RO, cleared only by device reset */
#define DMNIC_Q_RX_PACKETS          0x100
#define DMNIC_Q_RX_BYTES            0x108
#define DMNIC_Q_RX_SPLIT            0x110   /* delivered split */
#define DMNIC_Q_RX_NOSPLIT          0x118   /* delivered unsplit */
#define DMNIC_Q_RX_DROP_NOBUF       0x120   /* no buffers/completion slots */
#define DMNIC_Q_RX_DROP_DISABLED    0x128   /* steered to disabled/error q */
#define DMNIC_Q_RX_CSUM_BAD         0x130   /* delivered with L3/L4 bad */
#define DMNIC_Q_RX_ERRORS           0x138   /* guest mistakes on RX */
#define DMNIC_Q_TX_PACKETS          0x140
#define DMNIC_Q_TX_BYTES            0x148
#define DMNIC_Q_TX_ERRORS           0x150   /* guest mistakes on TX */
#define DMNIC_Q_TX_CSUM             0x158   /* packets with csum offload */
#define DMNIC_Q_RX_HDR_TOO_BIG      0x160   /* splittable, hdrs > hbuf */
#define DMNIC_Q_TX_TSO              0x168   /* TSO super-frames sent */
#define DMNIC_Q_RX_GRO_PACKETS      0x170   /* coalesced packets (F_GRO) */
#define DMNIC_Q_RX_GRO_SEGS         0x178   /* their wire segments */
#define DMNIC_Q_RX_GRO_BYTES        0x180   /* their PKT_LEN sum */
#define DMNIC_Q_RX_GRO_WIRE_BYTES   0x188   /* their segments' frame bytes */
/* 1.3, CAPS_USO: TSO and USO super-frames segmented and sent (no PSP) */
#define DMNIC_Q_TX_LSO_PACKETS      0x1e0   /* super-frames */
#define DMNIC_Q_TX_LSO_BYTES        0x1e8   /* their TXC_LEN sum */
#define DMNIC_Q_TX_LSO_WIRE_PACKETS 0x1f0   /* the frames they became */
#define DMNIC_Q_TX_LSO_WIRE_BYTES   0x1f8   /* those frames' bytes */

/* ------------------------------------------------------------------ */
/* In-memory structures                                                */
/* ------------------------------------------------------------------ */

/* RX buffer descriptor (header and payload rings), 16 bytes */
#define DMNIC_RXD_SIZE              16
#define DMNIC_RXD_ADDR              0x0     /* le64 bus address */
#define DMNIC_RXD_LEN               0x8     /* le32 buffer length */
#define DMNIC_RXD_ID                0xc     /* le16 buffer ID, echoed */

/* RX completion, 32 bytes; one per payload buffer, at least one/packet */
#define DMNIC_RXC_SIZE              32
#define DMNIC_RXC_HDR_ID            0x00    /* le16 header buffer ID (SOP) */
#define DMNIC_RXC_HDR_LEN           0x02    /* le16 bytes in header buffer */
#define DMNIC_RXC_PAY_ID            0x04    /* le16 payload buffer ID */
#define DMNIC_RXC_GRO_SEGS          0x06    /* u8 segments (F_GRO), else 0 */
#define DMNIC_RXC_RSS_TYPE          0x07    /* u8 DMNIC_RSS_TYPE_* */
#define DMNIC_RXC_PAY_LEN           0x08    /* le32 bytes in payload buffer */
#define DMNIC_RXC_PKT_LEN           0x0c    /* le32 hdr + payload bytes */
#define DMNIC_RXC_RSS_HASH          0x10    /* le32 */
#define DMNIC_RXC_VLAN_TCI          0x14    /* le16 outer VLAN tag TCI */
#define DMNIC_RXC_L4_OFF            0x16    /* le16 offset of L4 header */
#define DMNIC_RXC_FS_RULE           0x18    /* le16 matched rule, 0xffff */
#define DMNIC_RXC_GRO_MSS           0x1a    /* le16 gso_size (F_GRO), else 0 */
#define DMNIC_RXC_FLAGS             0x1c    /* le32, written last */
#define DMNIC_RXC_F_SOP             (1u << 0)   /* first cpl of packet */
#define DMNIC_RXC_F_EOP             (1u << 1)   /* last cpl of packet */
#define DMNIC_RXC_F_HDR             (1u << 2)   /* HDR_ID/HDR_LEN valid */
#define DMNIC_RXC_F_PAY             (1u << 3)   /* PAY_ID/PAY_LEN valid */
#define DMNIC_RXC_F_SPLIT           (1u << 4)   /* split at end of L4 hdr */
#define DMNIC_RXC_F_IPV4            (1u << 5)
#define DMNIC_RXC_F_IPV6            (1u << 6)
#define DMNIC_RXC_F_TCP             (1u << 7)
#define DMNIC_RXC_F_UDP             (1u << 8)
#define DMNIC_RXC_F_FRAG            (1u << 9)   /* IP fragment */
#define DMNIC_RXC_F_VLAN            (1u << 10)  /* VLAN_TCI valid */
#define DMNIC_RXC_F_L3_CSUM_OK      (1u << 11)  /* IPv4 header csum good */
#define DMNIC_RXC_F_L3_CSUM_BAD     (1u << 12)
#define DMNIC_RXC_F_L4_CSUM_OK      (1u << 13)  /* TCP/UDP csum good */
#define DMNIC_RXC_F_L4_CSUM_BAD     (1u << 14)
#define DMNIC_RXC_F_RSS             (1u << 15)  /* RSS_HASH valid */
#define DMNIC_RXC_F_FS_MATCH        (1u << 16)  /* FS_RULE valid */
#define DMNIC_RXC_F_GRO             (1u << 17)  /* coalesced: GRO_SEGS >= 2 */
#define DMNIC_RXC_F_GRO_FIXEDID     (1u << 18)  /* outer IPv4 ID fixed */
#define DMNIC_RXC_F_GRO_FIXEDID_INNER (1u << 19) /* inner IPv4 ID fixed */
#define DMNIC_RXC_F_TS              (1u << 20)  /* 1.3: RX timestamp written */
#define DMNIC_RXC_F_GEN             (1u << 31)  /* generation (phase) */

/* TX descriptor, 32 bytes */
#define DMNIC_TXD_SIZE              32
#define DMNIC_TXD_ADDR              0x00    /* le64 bus address */
#define DMNIC_TXD_LEN               0x08    /* le32 1..BUF_LEN_MAX */
#define DMNIC_TXD_ID                0x0c    /* le16 echoed in completion */
#define DMNIC_TXD_FLAGS             0x0e    /* le16 */
#define DMNIC_TXD_F_EOP             (1u << 0)   /* last desc of packet */
#define DMNIC_TXD_F_CSUM            (1u << 1)   /* SOP only: csum offload */
#define DMNIC_TXD_F_TSO             (1u << 2)   /* SOP only: TCP segmentation */
#define DMNIC_TXD_F_USO             (1u << 3)   /* SOP only, 1.3: UDP seg. */
#define DMNIC_TXD_F_TS              (1u << 4)   /* SOP only, 1.3: timestamp */
#define DMNIC_TXD_F_TNL_CSUM        (1u << 5)   /* SOP, 1.3: outer UDP csum */
#define DMNIC_TXD_CSUM_START        0x10    /* le16 SOP only */
#define DMNIC_TXD_CSUM_OFFSET       0x12    /* le16 SOP only */
#define DMNIC_TXD_MSS               0x14    /* le16 SOP only, with TSO */

/* TX completion, 16 bytes; one per packet */
#define DMNIC_TXC_SIZE              16
#define DMNIC_TXC_ID                0x00    /* le16 ID of the SOP desc */
#define DMNIC_TXC_NDESC             0x02    /* le16 descriptors consumed */
#define DMNIC_TXC_LEN               0x04    /* le32 frame bytes sent */
#define DMNIC_TXC_STATUS            0x08    /* le32 0 = sent */
#define DMNIC_TXC_S_OK              0
#define DMNIC_TXC_S_LINK_DOWN       1       /* dropped: link down */
#define DMNIC_TXC_S_PSP_ERROR       2       /* dropped: a PSP TX error */
#define DMNIC_TXC_FLAGS             0x0c    /* le32, written last */
#define DMNIC_TXC_F_GEN             (1u << 31)
#define DMNIC_TXC_F_TS              (1u << 0)   /* 1.3: TX timestamp written */

#endif /* HW_NET_DEVMEM_NIC_REGS_H */
