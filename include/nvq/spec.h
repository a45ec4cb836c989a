/* SPDX-License-Identifier: MIT */
/*
 * NVMe specification definitions shared by the host driver (lib/) and the
 * emulated controller (emu/). This is the only header the two sides share.
 *
 * Structures are little-endian on the wire; nvq supports little-endian
 * hosts only (asserted below), so fields are plain fixed-width integers.
 * Register and field layouts follow the NVM Express Base Specification 2.0
 * and the NVM Command Set Specification 1.0.
 */
#ifndef NVQ_SPEC_H
#define NVQ_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* Layout checks that compile as C11 and as C++11. */
#ifdef __cplusplus
#define NVQ_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define NVQ_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nvq supports little-endian hosts only"
#endif

/* ------------------------------------------------------------------ */
/* Controller registers (BAR0)                                         */
/* ------------------------------------------------------------------ */

enum nvq_reg {
	NVQ_REG_CAP = 0x00, /* 64-bit Controller Capabilities */
	NVQ_REG_VS = 0x08, /* Version */
	NVQ_REG_INTMS = 0x0c, /* Interrupt Mask Set */
	NVQ_REG_INTMC = 0x10, /* Interrupt Mask Clear */
	NVQ_REG_CC = 0x14, /* Controller Configuration */
	NVQ_REG_CSTS = 0x1c, /* Controller Status */
	NVQ_REG_NSSR = 0x20, /* NVM Subsystem Reset */
	NVQ_REG_AQA = 0x24, /* Admin Queue Attributes */
	NVQ_REG_ASQ = 0x28, /* 64-bit Admin SQ Base Address */
	NVQ_REG_ACQ = 0x30, /* 64-bit Admin CQ Base Address */
	NVQ_REG_CMBLOC = 0x38, /* Controller Memory Buffer Location */
	NVQ_REG_CMBSZ = 0x3c, /* Controller Memory Buffer Size */
	NVQ_REG_DBS = 0x1000, /* first doorbell (SQ0TDBL) */
};

/* CAP fields */
/*
 * What a read of any register returns once the device is gone (surprise
 * removal, a dead link, a controller that no longer decodes its BAR): all
 * ones, a value no register of a live controller holds.
 */
#define NVQ_REG_GONE32 0xffffffffu
#define NVQ_REG_GONE64 0xffffffffffffffffull

#define NVQ_CAP_MQES(cap) ((uint32_t)((cap)&0xffff)) /* 0's based */
#define NVQ_CAP_CQR(cap) ((uint32_t)(((cap) >> 16) & 0x1))
#define NVQ_CAP_AMS(cap) ((uint32_t)(((cap) >> 17) & 0x3))
#define NVQ_CAP_TO(cap) ((uint32_t)(((cap) >> 24) & 0xff)) /* 500 ms units */
#define NVQ_CAP_DSTRD(cap) ((uint32_t)(((cap) >> 32) & 0xf))
#define NVQ_CAP_NSSRS(cap) ((uint32_t)(((cap) >> 36) & 0x1))
#define NVQ_CAP_CSS(cap) ((uint32_t)(((cap) >> 37) & 0xff))
#define NVQ_CAP_BPS(cap) ((uint32_t)(((cap) >> 45) & 0x1))
#define NVQ_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xf))
#define NVQ_CAP_MPSMAX(cap) ((uint32_t)(((cap) >> 52) & 0xf))
#define NVQ_CAP_PMRS(cap) ((uint32_t)(((cap) >> 56) & 0x1))
#define NVQ_CAP_CMBS(cap) ((uint32_t)(((cap) >> 57) & 0x1))

#define NVQ_CAP_CSS_NVM (1u << 0) /* NVM command set */
#define NVQ_CAP_CSS_ADMIN_ONLY (1u << 7) /* no I/O command set */

/* VS */
#define NVQ_VS(major, minor, ter) \
	(((uint32_t)(major) << 16) | ((uint32_t)(minor) << 8) | (ter))
#define NVQ_VS_MJR(vs) ((vs) >> 16)
#define NVQ_VS_MNR(vs) (((vs) >> 8) & 0xff)
#define NVQ_VS_TER(vs) ((vs)&0xff)

/* CC fields */
#define NVQ_CC_EN (1u << 0)
#define NVQ_CC_CSS_SHIFT 4
#define NVQ_CC_CSS_MASK (0x7u << NVQ_CC_CSS_SHIFT)
#define NVQ_CC_CSS_NVM (0u << NVQ_CC_CSS_SHIFT)
#define NVQ_CC_MPS_SHIFT 7
#define NVQ_CC_MPS_MASK (0xfu << NVQ_CC_MPS_SHIFT)
#define NVQ_CC_AMS_SHIFT 11
#define NVQ_CC_AMS_MASK (0x7u << NVQ_CC_AMS_SHIFT)
#define NVQ_CC_AMS_RR (0u << NVQ_CC_AMS_SHIFT)
#define NVQ_CC_SHN_SHIFT 14
#define NVQ_CC_SHN_MASK (0x3u << NVQ_CC_SHN_SHIFT)
#define NVQ_CC_SHN_NONE (0u << NVQ_CC_SHN_SHIFT)
#define NVQ_CC_SHN_NORMAL (1u << NVQ_CC_SHN_SHIFT)
#define NVQ_CC_SHN_ABRUPT (2u << NVQ_CC_SHN_SHIFT)
#define NVQ_CC_IOSQES_SHIFT 16
#define NVQ_CC_IOSQES_MASK (0xfu << NVQ_CC_IOSQES_SHIFT)
#define NVQ_CC_IOCQES_SHIFT 20
#define NVQ_CC_IOCQES_MASK (0xfu << NVQ_CC_IOCQES_SHIFT)
#define NVQ_CC_MPS(cc) (((cc)&NVQ_CC_MPS_MASK) >> NVQ_CC_MPS_SHIFT)
#define NVQ_CC_IOSQES(cc) (((cc)&NVQ_CC_IOSQES_MASK) >> NVQ_CC_IOSQES_SHIFT)
#define NVQ_CC_IOCQES(cc) (((cc)&NVQ_CC_IOCQES_MASK) >> NVQ_CC_IOCQES_SHIFT)

/* CSTS fields */
#define NVQ_CSTS_RDY (1u << 0)
#define NVQ_CSTS_CFS (1u << 1)
#define NVQ_CSTS_SHST_SHIFT 2
#define NVQ_CSTS_SHST_MASK (0x3u << NVQ_CSTS_SHST_SHIFT)
#define NVQ_CSTS_SHST_NORMAL (0u << NVQ_CSTS_SHST_SHIFT)
#define NVQ_CSTS_SHST_OCCUR (1u << NVQ_CSTS_SHST_SHIFT)
#define NVQ_CSTS_SHST_CMPLT (2u << NVQ_CSTS_SHST_SHIFT)
#define NVQ_CSTS_NSSRO (1u << 4)
#define NVQ_CSTS_PP (1u << 5)

/* AQA fields (both 0's based) */
#define NVQ_AQA_ASQS(aqa) ((aqa)&0xfff)
#define NVQ_AQA_ACQS(aqa) (((aqa) >> 16) & 0xfff)
#define NVQ_AQA(sqs, cqs) \
	((((uint32_t)(cqs)&0xfff) << 16) | ((uint32_t)(sqs)&0xfff))
#define NVQ_AQ_MIN_ENTRIES 2
#define NVQ_AQ_MAX_ENTRIES 4096

/* CMBLOC / CMBSZ */
#define NVQ_CMBLOC_BIR(v) ((v)&0x7)
#define NVQ_CMBLOC_OFST(v) ((v) >> 12)
#define NVQ_CMBSZ_SQS (1u << 0)
#define NVQ_CMBSZ_CQS (1u << 1)
#define NVQ_CMBSZ_LISTS (1u << 2)
#define NVQ_CMBSZ_RDS (1u << 3)
#define NVQ_CMBSZ_WDS (1u << 4)
#define NVQ_CMBSZ_SZU(v) (((v) >> 8) & 0xf)
#define NVQ_CMBSZ_SZ(v) ((v) >> 12)

/*
 * Doorbells: SQ y Tail at 0x1000 + (2y) * (4 << DSTRD), CQ y Head at
 * 0x1000 + (2y + 1) * (4 << DSTRD). The same layout is used for the shadow
 * doorbell and EventIdx buffers, relative to their start.
 */
static inline uint32_t nvq_sq_db_index(uint16_t qid, uint32_t dstrd)
{
	return (2u * qid) << dstrd; /* in 32-bit words */
}

static inline uint32_t nvq_cq_db_index(uint16_t qid, uint32_t dstrd)
{
	return (2u * qid + 1) << dstrd;
}

static inline uint32_t nvq_sq_db_offset(uint16_t qid, uint32_t dstrd)
{
	return NVQ_REG_DBS + 4 * nvq_sq_db_index(qid, dstrd);
}

static inline uint32_t nvq_cq_db_offset(uint16_t qid, uint32_t dstrd)
{
	return NVQ_REG_DBS + 4 * nvq_cq_db_index(qid, dstrd);
}

/*
 * Shadow doorbell EventIdx rule (as for virtio): the host must write the
 * MMIO doorbell when moving from @old to @new passes @event_idx.
 */
static inline int nvq_dbbuf_need_event(uint16_t event_idx, uint16_t new_idx,
				       uint16_t old)
{
	return (uint16_t)(new_idx - event_idx - 1) < (uint16_t)(new_idx - old);
}

/* ------------------------------------------------------------------ */
/* Submission and completion queue entries                             */
/* ------------------------------------------------------------------ */

#define NVQ_SQE_SIZE 64
#define NVQ_CQE_SIZE 16
#define NVQ_SQES_LOG2 6
#define NVQ_CQES_LOG2 4

/* PSDT in CDW0: 0 = PRPs */
#define NVQ_PSDT_PRP 0
#define NVQ_PSDT_SGL_MPTR_CONTIG 1
#define NVQ_PSDT_SGL_MPTR_SGL 2

struct nvq_sqe {
	uint8_t opcode;
	uint8_t flags; /* bits 1:0 FUSE, bits 7:6 PSDT */
	uint16_t cid;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	uint64_t prp1;
	uint64_t prp2;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};

/*
 * Parameter Error Location of the Error Information log (NVMe 2.0,
 * 5.16.1.2): the byte of the command the error is in (7:0) and the bit in
 * that byte (10:8); 0xffff when no one field is to blame.
 */
#define NVQ_ERR_LOC(field) ((uint16_t)offsetof(struct nvq_sqe, field))
#define NVQ_ERR_LOC_BIT(byte, bit) ((uint16_t)((byte) | (bit) << 8))
#define NVQ_ERR_LOC_NONE 0xffffu

#define NVQ_SQE_FUSE_MASK 0x03
#define NVQ_SQE_PSDT(flags) (((flags) >> 6) & 0x3)

NVQ_STATIC_ASSERT(sizeof(struct nvq_sqe) == NVQ_SQE_SIZE, "SQE is 64 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, cid) == 2, "CID in CDW0 31:16");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, nsid) == 4, "NSID is CDW1");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, mptr) == 16, "MPTR is CDW4-5");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, prp1) == 24, "PRP1 is CDW6-7");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, prp2) == 32, "PRP2 is CDW8-9");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, cdw10) == 40, "CDW10");
NVQ_STATIC_ASSERT(offsetof(struct nvq_sqe, cdw15) == 60, "CDW15");

struct nvq_cqe {
	uint32_t result; /* DW0, command specific */
	uint32_t dw1; /* DW1, command specific */
	uint16_t sq_head;
	uint16_t sq_id;
	uint16_t cid;
	uint16_t status; /* bit 0 phase tag, bits 15:1 status field */
};

NVQ_STATIC_ASSERT(sizeof(struct nvq_cqe) == NVQ_CQE_SIZE, "CQE is 16 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_cqe, sq_head) == 8, "SQHD in DW2");
NVQ_STATIC_ASSERT(offsetof(struct nvq_cqe, cid) == 12, "CID in DW3 15:0");
NVQ_STATIC_ASSERT(offsetof(struct nvq_cqe, status) == 14, "SF in DW3 31:17");

/*
 * Status field, as the 15 bits above the phase tag (CQE DW3 31:17, shifted
 * down by 17): SC 7:0, SCT 10:8, CRD 12:11, More 13, DNR 14. nvq passes
 * this value (status >> 1 of the CQE's last word) to callers.
 */
#define NVQ_CQE_PHASE 0x1
#define NVQ_STATUS(cqe_status) ((uint16_t)((cqe_status) >> 1))
#define NVQ_SC(st) ((st)&0xff)
#define NVQ_SCT(st) (((st) >> 8) & 0x7)
#define NVQ_CRD(st) (((st) >> 11) & 0x3)
#define NVQ_MORE(st) (((st) >> 13) & 0x1)
#define NVQ_DNR(st) (((st) >> 14) & 0x1)
#define NVQ_STATUS_MAKE(sct, sc) ((uint16_t)((((sct)&0x7) << 8) | ((sc)&0xff)))
/* SCT and SC together: zero for success, whatever CRD, More and DNR say. */
#define NVQ_STATUS_CODE_MASK 0x7ffu
#define NVQ_STATUS_DNR_BIT (1u << 14)
#define NVQ_STATUS_MORE_BIT (1u << 13)

enum nvq_sct {
	NVQ_SCT_GENERIC = 0x0,
	NVQ_SCT_CMD_SPECIFIC = 0x1,
	NVQ_SCT_MEDIA = 0x2,
	NVQ_SCT_PATH = 0x3,
	NVQ_SCT_VENDOR = 0x7,
};

/* Generic command status (SCT 0) */
enum nvq_sc_generic {
	NVQ_SC_SUCCESS = 0x00,
	NVQ_SC_INVALID_OPCODE = 0x01,
	NVQ_SC_INVALID_FIELD = 0x02,
	NVQ_SC_CMDID_CONFLICT = 0x03,
	NVQ_SC_DATA_XFER_ERROR = 0x04,
	NVQ_SC_POWER_LOSS = 0x05,
	NVQ_SC_INTERNAL = 0x06,
	NVQ_SC_ABORT_REQ = 0x07,
	NVQ_SC_ABORT_QUEUE = 0x08, /* aborted due to SQ deletion */
	NVQ_SC_FUSED_FAIL = 0x09,
	NVQ_SC_FUSED_MISSING = 0x0a,
	NVQ_SC_INVALID_NS = 0x0b, /* invalid namespace or format */
	NVQ_SC_CMD_SEQ_ERROR = 0x0c,
	NVQ_SC_SGL_INVALID_LAST = 0x0d,
	NVQ_SC_SGL_INVALID_COUNT = 0x0e,
	NVQ_SC_SGL_INVALID_DATA = 0x0f,
	NVQ_SC_SGL_INVALID_METADATA = 0x10,
	NVQ_SC_SGL_INVALID_TYPE = 0x11,
	NVQ_SC_CMB_INVALID_USE = 0x12,
	NVQ_SC_PRP_INVALID_OFFSET = 0x13,
	NVQ_SC_ATOMIC_WU_EXCEEDED = 0x14,
	NVQ_SC_OP_DENIED = 0x15,
	NVQ_SC_SGL_INVALID_OFFSET = 0x16,
	NVQ_SC_HOST_ID_INCONSIST = 0x18,
	NVQ_SC_KA_TIMEOUT_EXPIRED = 0x19,
	NVQ_SC_KA_TIMEOUT_INVALID = 0x1a,
	NVQ_SC_ABORTED_PREEMPT_ABORT = 0x1b,
	NVQ_SC_SANITIZE_FAILED = 0x1c,
	NVQ_SC_SANITIZE_IN_PROGRESS = 0x1d,
	NVQ_SC_NS_WRITE_PROTECTED = 0x20,
	NVQ_SC_CMD_INTERRUPTED = 0x21,
	NVQ_SC_TRANSIENT_TR_ERR = 0x22,
	/* NVM command set specific, still SCT 0 */
	NVQ_SC_LBA_RANGE = 0x80,
	NVQ_SC_CAP_EXCEEDED = 0x81,
	NVQ_SC_NS_NOT_READY = 0x82,
	NVQ_SC_RESERVATION_CONFLICT = 0x83,
	NVQ_SC_FORMAT_IN_PROGRESS = 0x84,
};

/* Command specific status (SCT 1) */
enum nvq_sc_cmd_specific {
	NVQ_SC_CQ_INVALID = 0x00,
	NVQ_SC_QID_INVALID = 0x01,
	NVQ_SC_QUEUE_SIZE = 0x02,
	NVQ_SC_ABORT_LIMIT = 0x03,
	NVQ_SC_AER_LIMIT = 0x05,
	NVQ_SC_FW_SLOT = 0x06,
	NVQ_SC_FW_IMAGE = 0x07,
	NVQ_SC_INVALID_VECTOR = 0x08,
	NVQ_SC_INVALID_LOG_PAGE = 0x09,
	NVQ_SC_INVALID_FORMAT = 0x0a,
	NVQ_SC_FW_NEEDS_CONV_RESET = 0x0b,
	NVQ_SC_INVALID_QUEUE_DELETION = 0x0c,
	NVQ_SC_FEATURE_NOT_SAVEABLE = 0x0d,
	NVQ_SC_FEATURE_NOT_CHANGEABLE = 0x0e,
	NVQ_SC_FEATURE_NOT_PER_NS = 0x0f,
	/* NVM command set specific */
	NVQ_SC_BAD_ATTRIBUTES = 0x80,
	NVQ_SC_INVALID_PI = 0x81,
	NVQ_SC_READ_ONLY = 0x82,
};

/* Media and data integrity errors (SCT 2) */
enum nvq_sc_media {
	NVQ_SC_WRITE_FAULT = 0x80,
	NVQ_SC_READ_ERROR = 0x81,
	NVQ_SC_GUARD_CHECK = 0x82,
	NVQ_SC_APPTAG_CHECK = 0x83,
	NVQ_SC_REFTAG_CHECK = 0x84,
	NVQ_SC_COMPARE_FAILED = 0x85,
	NVQ_SC_ACCESS_DENIED = 0x86,
	NVQ_SC_UNWRITTEN_BLOCK = 0x87,
};

/* ------------------------------------------------------------------ */
/* Admin command set                                                   */
/* ------------------------------------------------------------------ */

enum nvq_admin_opcode {
	nvq_admin_delete_sq = 0x00,
	nvq_admin_create_sq = 0x01,
	nvq_admin_get_log_page = 0x02,
	nvq_admin_delete_cq = 0x04,
	nvq_admin_create_cq = 0x05,
	nvq_admin_identify = 0x06,
	nvq_admin_abort_cmd = 0x08,
	nvq_admin_set_features = 0x09,
	nvq_admin_get_features = 0x0a,
	nvq_admin_async_event = 0x0c,
	nvq_admin_ns_mgmt = 0x0d,
	nvq_admin_activate_fw = 0x10,
	nvq_admin_download_fw = 0x11,
	nvq_admin_keep_alive = 0x18,
	nvq_admin_dbbuf = 0x7c,
	nvq_admin_format_nvm = 0x80,
};

/* Create I/O CQ: CDW10 QID 15:0, QSIZE 31:16 (0's based) */
#define NVQ_QUEUE_PHYS_CONTIG (1u << 0) /* CDW11 PC */
#define NVQ_CQ_IRQ_ENABLED (1u << 1) /* CDW11 IEN */
#define NVQ_CQ_IV_SHIFT 16 /* CDW11 IV 31:16 */
/* Create I/O SQ: CDW11 PC bit 0, QPRIO 2:1, CQID 31:16 */
#define NVQ_SQ_PRIO_SHIFT 1
#define NVQ_SQ_CQID_SHIFT 16

/* Identify CNS values */
enum nvq_identify_cns {
	NVQ_ID_CNS_NS = 0x00,
	NVQ_ID_CNS_CTRL = 0x01,
	NVQ_ID_CNS_NS_ACTIVE_LIST = 0x02,
	NVQ_ID_CNS_NS_DESC_LIST = 0x03,
	/* I/O Command Set specific Identify Namespace; CSI in CDW11 31:24 */
	NVQ_ID_CNS_CSI_NS = 0x05,
	/* I/O Command Set specific Identify Controller; CSI in CDW11 31:24 */
	NVQ_ID_CNS_CSI_CTRL = 0x06,
};

/* Feature identifiers */
enum nvq_feat {
	NVQ_FEAT_ARBITRATION = 0x01,
	NVQ_FEAT_POWER_MGMT = 0x02,
	NVQ_FEAT_LBA_RANGE = 0x03,
	NVQ_FEAT_TEMP_THRESH = 0x04,
	NVQ_FEAT_ERR_RECOVERY = 0x05,
	NVQ_FEAT_VOLATILE_WC = 0x06,
	NVQ_FEAT_NUM_QUEUES = 0x07,
	NVQ_FEAT_IRQ_COALESCE = 0x08,
	NVQ_FEAT_IRQ_CONFIG = 0x09,
	NVQ_FEAT_WRITE_ATOMIC = 0x0a,
	NVQ_FEAT_ASYNC_EVENT = 0x0b,
};

/* Get Features CDW10 SEL 10:8 */
#define NVQ_FEAT_SEL_SHIFT 8
enum nvq_feat_sel {
	NVQ_FEAT_SEL_CURRENT = 0,
	NVQ_FEAT_SEL_DEFAULT = 1,
	NVQ_FEAT_SEL_SAVED = 2,
	NVQ_FEAT_SEL_SUPPORTED = 3,
};
#define NVQ_FEAT_SV (1u << 31) /* Set Features CDW10 save */

/* Number of Queues: NSQR 15:0, NCQR 31:16, both 0's based */
#define NVQ_NUM_QUEUES(nsq, ncq) \
	((((uint32_t)(ncq)-1) << 16) | (((uint32_t)(nsq)-1) & 0xffff))

/* Interrupt Coalescing: THR 7:0 (0's based), TIME 15:8 (100 us units) */
#define NVQ_IRQ_COALESCE_THR(v) ((v)&0xff)
#define NVQ_IRQ_COALESCE_TIME(v) (((v) >> 8) & 0xff)

/* Arbitration: AB 2:0, LPW 15:8, MPW 23:16, HPW 31:24 */
#define NVQ_ARB_AB(v) ((v)&0x7)

/* Log page identifiers */
enum nvq_log_page {
	NVQ_LOG_ERROR = 0x01,
	NVQ_LOG_SMART = 0x02,
	NVQ_LOG_FW_SLOT = 0x03,
	NVQ_LOG_CHANGED_NS = 0x04,
	NVQ_LOG_CMD_EFFECTS = 0x05,
};

/* Get Log Page: CDW10 LID 7:0, LSP 14:8, RAE 15, NUMDL 31:16 (0's based
 * dword count, low half); CDW11 NUMDU 15:0; CDW12/13 offset in bytes. */
#define NVQ_LOG_RAE (1u << 15)

/* Asynchronous event completion DW0 */
#define NVQ_AER_TYPE(dw0) ((dw0)&0x7)
#define NVQ_AER_INFO(dw0) (((dw0) >> 8) & 0xff)
#define NVQ_AER_LOG_PAGE(dw0) (((dw0) >> 16) & 0xff)
enum nvq_aer_type {
	NVQ_AER_ERROR = 0,
	NVQ_AER_SMART = 1,
	NVQ_AER_NOTICE = 2,
	NVQ_AER_CSS = 6,
	NVQ_AER_VS = 7,
};

/* Abort: CDW10 SQID 15:0, CID 31:16; result bit 0 set = not aborted */
#define NVQ_ABORT_NOT_ABORTED 0x1

/* ------------------------------------------------------------------ */
/* NVM command set                                                     */
/* ------------------------------------------------------------------ */

/* The broadcast namespace id: every namespace (NVMe 2.0, 3.2.1.2). */
#define NVQ_NSID_ALL 0xffffffffu

enum nvq_nvm_opcode {
	nvq_cmd_flush = 0x00,
	nvq_cmd_write = 0x01,
	nvq_cmd_read = 0x02,
	nvq_cmd_write_uncor = 0x04,
	nvq_cmd_compare = 0x05,
	nvq_cmd_write_zeroes = 0x08,
	nvq_cmd_dsm = 0x09,
};

/* Read/Write/Write Zeroes: CDW10-11 SLBA, CDW12 NLB 15:0 (0's based) */
#define NVQ_RW_NLB_MASK 0xffffu
#define NVQ_RW_DEAC (1u << 25) /* Write Zeroes: deallocate */
#define NVQ_RW_FUA (1u << 30)
#define NVQ_RW_LR (1u << 31)

/* Dataset Management: CDW10 NR 7:0 (0's based), CDW11 attributes */
#define NVQ_DSM_IDR (1u << 0)
#define NVQ_DSM_IDW (1u << 1)
#define NVQ_DSM_AD (1u << 2)
#define NVQ_DSM_MAX_RANGES 256

struct nvq_dsm_range {
	uint32_t cattr;
	uint32_t nlb;
	uint64_t slba;
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_dsm_range) == 16, "DSM range is 16 bytes");

/* ------------------------------------------------------------------ */
/* Identify data structures                                            */
/* ------------------------------------------------------------------ */

#define NVQ_IDENTIFY_DATA_SIZE 4096

struct nvq_id_power_state {
	uint16_t max_power; /* centiwatts */
	uint8_t rsvd2;
	uint8_t flags;
	uint32_t entry_lat; /* microseconds */
	uint32_t exit_lat; /* microseconds */
	uint8_t read_tput;
	uint8_t read_lat;
	uint8_t write_tput;
	uint8_t write_lat;
	uint16_t idle_power;
	uint8_t idle_scale;
	uint8_t rsvd19;
	uint16_t active_power;
	uint8_t active_work_scale;
	uint8_t rsvd23[9];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_id_power_state) == 32, "PSD is 32 bytes");

/* OACS bits */
#define NVQ_CTRL_OACS_SEC_SUPP (1u << 0)
#define NVQ_CTRL_OACS_FORMAT (1u << 1)
#define NVQ_CTRL_OACS_FW (1u << 2)
#define NVQ_CTRL_OACS_NS_MNGT (1u << 3)
#define NVQ_CTRL_OACS_DBBUF (1u << 8)
/* ONCS bits */
#define NVQ_CTRL_ONCS_COMPARE (1u << 0)
#define NVQ_CTRL_ONCS_WRITE_UNCOR (1u << 1)
#define NVQ_CTRL_ONCS_DSM (1u << 2)
#define NVQ_CTRL_ONCS_WRITE_ZEROES (1u << 3)
#define NVQ_CTRL_ONCS_SAVE_FEAT (1u << 4)
/* VWC bits */
#define NVQ_CTRL_VWC_PRESENT (1u << 0)
/* LPA bits */
#define NVQ_CTRL_LPA_SMART_PER_NS (1u << 0)
#define NVQ_CTRL_LPA_CMD_EFFECTS (1u << 1)
#define NVQ_CTRL_LPA_EXT_DATA (1u << 2)

struct nvq_id_ctrl {
	uint16_t vid;
	uint16_t ssvid;
	char sn[20];
	char mn[40];
	char fr[8];
	uint8_t rab;
	uint8_t ieee[3];
	uint8_t cmic;
	uint8_t mdts; /* log2 of max transfer in units of CAP.MPSMIN; 0 none */
	uint16_t cntlid;
	uint32_t ver;
	uint32_t rtd3r;
	uint32_t rtd3e;
	uint32_t oaes;
	uint32_t ctratt;
	uint16_t rrls;
	uint8_t rsvd102[9];
	uint8_t cntrltype;
	uint8_t fguid[16];
	uint16_t crdt1;
	uint16_t crdt2;
	uint16_t crdt3;
	uint8_t rsvd134[119];
	uint8_t nvmsr;
	uint8_t vwci;
	uint8_t mec;
	uint16_t oacs;
	uint8_t acl;
	uint8_t aerl;
	uint8_t frmw;
	uint8_t lpa;
	uint8_t elpe;
	uint8_t npss;
	uint8_t avscc;
	uint8_t apsta;
	uint16_t wctemp;
	uint16_t cctemp;
	uint16_t mtfa;
	uint32_t hmpre;
	uint32_t hmmin;
	uint8_t tnvmcap[16];
	uint8_t unvmcap[16];
	uint32_t rpmbs;
	uint16_t edstt;
	uint8_t dsto;
	uint8_t fwug;
	uint16_t kas;
	uint16_t hctma;
	uint16_t mntmt;
	uint16_t mxtmt;
	uint32_t sanicap;
	uint32_t hmminds;
	uint16_t hmmaxd;
	uint16_t nsetidmax;
	uint16_t endgidmax;
	uint8_t anatt;
	uint8_t anacap;
	uint32_t anagrpmax;
	uint32_t nanagrpid;
	uint32_t pels;
	uint16_t domainid;
	uint8_t rsvd358[10];
	uint8_t megcap[16];
	uint8_t rsvd384[128];
	uint8_t sqes;
	uint8_t cqes;
	uint16_t maxcmd;
	uint32_t nn;
	uint16_t oncs;
	uint16_t fuses;
	uint8_t fna;
	uint8_t vwc;
	uint16_t awun;
	uint16_t awupf;
	uint8_t icsvscc;
	uint8_t nwpc;
	uint16_t acwu;
	uint16_t ocfs;
	uint32_t sgls;
	uint32_t mnan;
	uint8_t maxdna[16];
	uint32_t maxcna;
	uint8_t rsvd564[204];
	char subnqn[256];
	uint8_t rsvd1024[768];
	uint32_t ioccsz;
	uint32_t iorcsz;
	uint16_t icdoff;
	uint8_t fcatt;
	uint8_t msdbd;
	uint16_t ofcs;
	uint8_t rsvd1806[242];
	struct nvq_id_power_state psd[32];
	uint8_t vs[1024];
};

NVQ_STATIC_ASSERT(sizeof(struct nvq_id_ctrl) == NVQ_IDENTIFY_DATA_SIZE,
		  "Identify Controller is 4096 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, sn) == 4, "SN");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, mn) == 24, "MN");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, fr) == 64, "FR");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, mdts) == 77, "MDTS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, cntlid) == 78, "CNTLID");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, ver) == 80, "VER");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, cntrltype) == 111, "CNTRLTYPE");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, crdt1) == 128, "CRDT1");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, nvmsr) == 253, "NVMSR");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, oacs) == 256, "OACS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, aerl) == 259, "AERL");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, lpa) == 261, "LPA");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, elpe) == 262, "ELPE");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, npss) == 263, "NPSS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, wctemp) == 266, "WCTEMP");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, tnvmcap) == 280, "TNVMCAP");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, kas) == 320, "KAS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, sanicap) == 328, "SANICAP");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, anatt) == 342, "ANATT");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, pels) == 352, "PELS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, sqes) == 512, "SQES");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, maxcmd) == 514, "MAXCMD");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, nn) == 516, "NN");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, oncs) == 520, "ONCS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, vwc) == 525, "VWC");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, sgls) == 536, "SGLS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, subnqn) == 768, "SUBNQN");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, ioccsz) == 1792, "IOCCSZ");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, psd) == 2048, "PSD0");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl, vs) == 3072, "VS area");

struct nvq_lbaf {
	uint16_t ms; /* metadata bytes per LBA */
	uint8_t ds; /* LBA data size, log2 */
	uint8_t rp; /* relative performance, bits 1:0 */
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_lbaf) == 4, "LBA format is 4 bytes");

#define NVQ_NS_FLBAS_LBA_MASK 0x0f /* bits 3:0; 6:5 are the high bits */
#define NVQ_NS_FLBAS_LBA_UMASK 0x60
#define NVQ_NS_FLBAS_META_EXT 0x10
#define NVQ_NS_NSFEAT_THIN (1u << 0)
#define NVQ_NS_DLFEAT_READ_ZEROES 0x1 /* DLFEAT 2:0 = 001b */
#define NVQ_NS_DLFEAT_WZ_DEAC (1u << 3)

/* Index of the LBA format in use, from FLBAS (up to 64 formats). */
static inline unsigned int nvq_flbas_index(uint8_t flbas)
{
	return (flbas & NVQ_NS_FLBAS_LBA_MASK) |
	       ((flbas & NVQ_NS_FLBAS_LBA_UMASK) >> 1);
}

struct nvq_id_ns {
	uint64_t nsze;
	uint64_t ncap;
	uint64_t nuse;
	uint8_t nsfeat;
	uint8_t nlbaf; /* 0's based number of LBA formats */
	uint8_t flbas;
	uint8_t mc;
	uint8_t dpc;
	uint8_t dps;
	uint8_t nmic;
	uint8_t rescap;
	uint8_t fpi;
	uint8_t dlfeat;
	uint16_t nawun;
	uint16_t nawupf;
	uint16_t nacwu;
	uint16_t nabsn;
	uint16_t nabo;
	uint16_t nabspf;
	uint16_t noiob;
	uint8_t nvmcap[16];
	uint16_t npwg;
	uint16_t npwa;
	uint16_t npdg;
	uint16_t npda;
	uint16_t nows;
	uint16_t mssrl;
	uint32_t mcl;
	uint8_t msrc;
	uint8_t rsvd81[11];
	uint32_t anagrpid;
	uint8_t rsvd96[3];
	uint8_t nsattr;
	uint16_t nvmsetid;
	uint16_t endgid;
	uint8_t nguid[16];
	uint8_t eui64[8];
	struct nvq_lbaf lbaf[64];
	uint8_t vs[3712];
};

NVQ_STATIC_ASSERT(sizeof(struct nvq_id_ns) == NVQ_IDENTIFY_DATA_SIZE,
		  "Identify Namespace is 4096 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, nsfeat) == 24, "NSFEAT");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, flbas) == 26, "FLBAS");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, dlfeat) == 33, "DLFEAT");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, noiob) == 46, "NOIOB");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, nvmcap) == 48, "NVMCAP");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, npwg) == 64, "NPWG");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, mssrl) == 74, "MSSRL");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, anagrpid) == 92, "ANAGRPID");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, nsattr) == 99, "NSATTR");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, nguid) == 104, "NGUID");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, eui64) == 120, "EUI64");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, lbaf) == 128, "LBAF0");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns, vs) == 384, "VS area");

/* Command Set Identifiers (CDW11 CSI of Identify, NVMe 2.0 Figure 286). */
#define NVQ_CSI_NVM 0
#define NVQ_IDENTIFY_CSI_SHIFT 24

/*
 * Identify Controller for the NVM command set (CNS 06h, CSI 00h; NVM
 * Command Set Specification 1.0, 4.1.5.1): limits that are not MDTS.
 * Sizes are powers of two in units of CAP.MPSMIN; 0 means no limit.
 */
struct nvq_id_ctrl_nvm {
	uint8_t vsl; /* Verify Size Limit */
	uint8_t wzsl; /* Write Zeroes Size Limit */
	uint8_t wusl; /* Write Uncorrectable Size Limit */
	uint8_t dmrl; /* Dataset Management Ranges Limit (count) */
	uint32_t dmrsl; /* DSM Range Size Limit (logical blocks) */
	uint64_t dmsl; /* DSM Size Limit (logical blocks, all ranges) */
	uint8_t rsvd16[4080];
};

NVQ_STATIC_ASSERT(sizeof(struct nvq_id_ctrl_nvm) == NVQ_IDENTIFY_DATA_SIZE,
		  "Identify Controller (NVM) is 4096 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl_nvm, dmrsl) == 4, "DMRSL");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ctrl_nvm, dmsl) == 8, "DMSL");

/*
 * Identify Namespace for the NVM command set (CNS 05h, CSI 00h; NVM
 * Command Set Specification 1.0, 4.1.5.3), which a controller with
 * CTRATT.ELBAS answers: per LBA format the protection information format
 * (the guard's width) and the storage tag size. Without ELBAS every
 * format has the 16-bit guard and no storage tag.
 */
#define NVQ_CTRL_CTRATT_ELBAS (1u << 15)

struct nvq_id_ns_nvm {
	uint64_t lbstm; /* Logical Block Storage Tag Mask */
	uint8_t pic; /* Protection Information Capabilities */
	uint8_t rsvd9[3];
	uint32_t elbaf[64]; /* Extended LBA Formats, index as lbaf[] */
	uint8_t rsvd268[3828];
};

NVQ_STATIC_ASSERT(sizeof(struct nvq_id_ns_nvm) == NVQ_IDENTIFY_DATA_SIZE,
		  "Identify Namespace (NVM) is 4096 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_id_ns_nvm, elbaf) == 12, "ELBAF0");

/* ELBAF: Storage Tag Size (bits) 6:0, Protection Information Format 8:7
 * (0 16-bit guard, 1 32-bit, 2 64-bit, 3 qualified: see QPIF 12:9). */
#define NVQ_ELBAF_STS_MASK 0x7fu
#define NVQ_ELBAF_PIF_SHIFT 7
#define NVQ_ELBAF_PIF_MASK 0x3u
enum {
	NVQ_PIF_16B_GUARD = 0,
	NVQ_PIF_32B_GUARD = 1,
	NVQ_PIF_64B_GUARD = 2,
	NVQ_PIF_QUALIFIED = 3,
};

/* ------------------------------------------------------------------ */
/* Log pages                                                           */
/* ------------------------------------------------------------------ */

struct nvq_error_log {
	uint64_t error_count;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status; /* status field, phase tag bit 0 */
	uint16_t param_error_location;
	uint64_t lba;
	uint32_t nsid;
	uint8_t vs;
	uint8_t trtype;
	uint8_t rsvd30[2];
	uint64_t cs;
	uint16_t trtype_spec_info;
	uint8_t rsvd42[22];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_error_log) == 64, "error entry 64 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_error_log, lba) == 16, "error LBA");
NVQ_STATIC_ASSERT(offsetof(struct nvq_error_log, cs) == 32, "error CS");

struct nvq_smart_log {
	uint8_t critical_warning;
	uint8_t temperature[2]; /* Kelvin */
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint8_t endu_grp_crit_warn_sumry;
	uint8_t rsvd7[25];
	uint8_t data_units_read[16]; /* 1000 x 512 bytes */
	uint8_t data_units_written[16];
	uint8_t host_reads[16];
	uint8_t host_writes[16];
	uint8_t ctrl_busy_time[16];
	uint8_t power_cycles[16];
	uint8_t power_on_hours[16];
	uint8_t unsafe_shutdowns[16];
	uint8_t media_errors[16];
	uint8_t num_err_log_entries[16];
	uint32_t warning_temp_time;
	uint32_t critical_comp_time;
	uint16_t temp_sensor[8];
	uint32_t thm_temp1_trans_count;
	uint32_t thm_temp2_trans_count;
	uint32_t thm_temp1_total_time;
	uint32_t thm_temp2_total_time;
	uint8_t rsvd232[280];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_smart_log) == 512, "SMART log 512 bytes");
NVQ_STATIC_ASSERT(offsetof(struct nvq_smart_log, data_units_read) == 32, "DUR");
NVQ_STATIC_ASSERT(offsetof(struct nvq_smart_log, host_reads) == 64, "HRC");
NVQ_STATIC_ASSERT(offsetof(struct nvq_smart_log, unsafe_shutdowns) == 144,
		  "unsafe shutdowns");
NVQ_STATIC_ASSERT(offsetof(struct nvq_smart_log, warning_temp_time) == 192,
		  "WCTT");
NVQ_STATIC_ASSERT(offsetof(struct nvq_smart_log, temp_sensor) == 200, "TS1");

struct nvq_fw_slot_log {
	uint8_t afi;
	uint8_t rsvd1[7];
	char frs[7][8];
	uint8_t rsvd64[448];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_fw_slot_log) == 512, "FW slot log 512");
NVQ_STATIC_ASSERT(offsetof(struct nvq_fw_slot_log, frs) == 8, "FRS1");

/* Little helpers for the 128-bit little-endian counters in the SMART log. */
static inline void nvq_u128_add(uint8_t v[16], uint64_t add)
{
	unsigned int i;

	for (i = 0; i < 16 && add; i++) {
		uint64_t s = (uint64_t)v[i] + (add & 0xff);

		v[i] = (uint8_t)s;
		add = (add >> 8) + (s >> 8);
	}
}

static inline uint64_t nvq_u128_lo(const uint8_t v[16])
{
	uint64_t r = 0;
	int i;

	for (i = 7; i >= 0; i--)
		r = (r << 8) | v[i];
	return r;
}

/* ------------------------------------------------------------------ */
/* NVMe over Fabrics (NVMe-oF 1.1) and its TCP transport (NVMe/TCP     */
/* Transport Specification 1.0)                                        */
/* ------------------------------------------------------------------ */

/* The Fabrics command opcode; the command type is in byte 4 (fctype). */
#define NVQ_FABRICS_OPC 0x7f
enum nvq_fctype {
	NVQ_FCTYPE_PROP_SET = 0x00,
	NVQ_FCTYPE_CONNECT = 0x01,
	NVQ_FCTYPE_PROP_GET = 0x04,
	NVQ_FCTYPE_AUTH_SEND = 0x05,
	NVQ_FCTYPE_AUTH_RECV = 0x06,
	NVQ_FCTYPE_DISCONNECT = 0x08,
};

/* Command Specific status of Fabrics commands (SCT 1h). */
enum nvq_fabrics_sc {
	NVQ_SC_CONNECT_INCOMPAT_FMT = 0x80,
	NVQ_SC_CONNECT_CTRL_BUSY = 0x81,
	NVQ_SC_CONNECT_INVALID_PARAM = 0x82,
	NVQ_SC_CONNECT_RESTART_DISC = 0x83,
	NVQ_SC_CONNECT_INVALID_HOST = 0x84,
	NVQ_SC_INVALID_QUEUE_TYPE = 0x85,
	NVQ_SC_DISC_RESTART = 0x90,
	NVQ_SC_AUTH_REQUIRED = 0x91,
};

/* The NQN fields of Connect data and the discovery log: 256 bytes, of
 * which an NQN uses at most 223 (NVMe 2.0, 4.5). */
#define NVQ_NQN_FIELD_LEN 256
#define NVQ_NQN_MAX 223
#define NVQ_DISC_NQN "nqn.2014-08.org.nvmexpress.discovery"
#define NVQ_TCP_PORT 4420
#define NVQ_TCP_DISC_PORT 8009

/* SGL descriptor (NVMe 2.0, 4.1.2), as the capsule's data pointer. */
struct nvq_sgl_desc {
	uint64_t addr;
	uint32_t length;
	uint8_t rsvd[3];
	uint8_t type; /* 7:4 descriptor type, 3:0 sub type */
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_sgl_desc) == 16, "SGL descriptor");
/* Data Block, Offset: data in the capsule at @addr bytes in. */
#define NVQ_SGL_DATA_OFFSET 0x01
/* Transport SGL Data Block, transport specific: data by C2H/H2C PDUs. */
#define NVQ_SGL_TRANSPORT_DATA 0x5a

/* Fabrics commands: the SQE's common half, then per command type. */
struct nvq_fabrics_cmd {
	uint8_t opcode; /* NVQ_FABRICS_OPC */
	uint8_t flags; /* PSDT 01b for capsules: NVQ_PSDT_SGL_MPTR_CONTIG */
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd1[19];
	struct nvq_sgl_desc sgl1;
	union {
		struct {
			uint16_t recfmt; /* 0 */
			uint16_t qid;
			uint16_t sqsize; /* 0's based */
			uint8_t cattr;
			uint8_t rsvd;
			uint32_t kato; /* ms, admin queue only */
			uint8_t rsvd2[12];
		} connect;
		struct {
			uint8_t attrib; /* 2:0 size: 0 4 bytes, 1 8 bytes */
			uint8_t rsvd[3];
			uint32_t offset;
			uint64_t value; /* Property Set only */
			uint8_t rsvd2[8];
		} prop;
		struct {
			uint16_t recfmt; /* 0 */
			uint8_t rsvd[22];
		} disconnect;
	};
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_fabrics_cmd) == 64, "Fabrics command");
NVQ_STATIC_ASSERT(offsetof(struct nvq_fabrics_cmd, sgl1) == 24, "SGL1");
NVQ_STATIC_ASSERT(offsetof(struct nvq_fabrics_cmd, connect.kato) == 48,
		  "KATO");
NVQ_STATIC_ASSERT(offsetof(struct nvq_fabrics_cmd, prop.offset) == 44,
		  "OFST");
#define NVQ_PROP_SIZE_4 0
#define NVQ_PROP_SIZE_8 1

/* Connect command data (1024 bytes). */
struct nvq_connect_data {
	uint8_t hostid[16];
	uint16_t cntlid; /* FFFFh: dynamic controller model, any */
	uint8_t rsvd[238];
	char subnqn[NVQ_NQN_FIELD_LEN];
	char hostnqn[NVQ_NQN_FIELD_LEN];
	uint8_t rsvd2[256];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_connect_data) == 1024, "Connect data");
NVQ_STATIC_ASSERT(offsetof(struct nvq_connect_data, subnqn) == 256,
		  "SUBNQN");
/* A successful Connect's DW0: 15:0 the controller's CNTLID. */

/* Discovery Log Page (Log Identifier 70h). */
#define NVQ_LOG_DISCOVERY 0x70
struct nvq_disc_log_hdr {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t rsvd[1006];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_disc_log_hdr) == 1024, "Disc log header");
struct nvq_disc_log_entry {
	uint8_t trtype; /* 3: TCP */
	uint8_t adrfam; /* 1: IPv4, 2: IPv6 */
	uint8_t subtype; /* 1: referral, 2: NVM subsystem, 3: this discovery */
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t rsvd[20];
	char trsvcid[32];
	uint8_t rsvd2[192];
	char subnqn[NVQ_NQN_FIELD_LEN];
	char traddr[256];
	uint8_t tsas[256]; /* TCP: byte 0 SECTYPE */
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_disc_log_entry) == 1024, "Disc entry");
NVQ_STATIC_ASSERT(offsetof(struct nvq_disc_log_entry, trsvcid) == 32,
		  "TRSVCID");
NVQ_STATIC_ASSERT(offsetof(struct nvq_disc_log_entry, traddr) == 512,
		  "TRADDR");
#define NVQ_TRTYPE_RDMA 1
#define NVQ_TRTYPE_FC 2
#define NVQ_TRTYPE_TCP 3
#define NVQ_TRTYPE_LOOP 254
#define NVQ_ADRFAM_IP4 1
#define NVQ_ADRFAM_IP6 2
#define NVQ_SUBTYPE_REFERRAL 1
#define NVQ_SUBTYPE_NVME 2
#define NVQ_SUBTYPE_CURRENT_DISC 3

/* NVMe/TCP PDUs: a common header, a PDU specific header, optional header
 * digest, padding up to PDO, data, optional data digest. */
enum nvq_tcp_pdu_type {
	NVQ_TCP_ICREQ = 0x00,
	NVQ_TCP_ICRESP = 0x01,
	NVQ_TCP_H2C_TERM = 0x02,
	NVQ_TCP_C2H_TERM = 0x03,
	NVQ_TCP_CMD = 0x04,
	NVQ_TCP_RSP = 0x05,
	NVQ_TCP_H2C_DATA = 0x06,
	NVQ_TCP_C2H_DATA = 0x07,
	NVQ_TCP_R2T = 0x09,
};
/* Common header flags. */
#define NVQ_TCP_F_HDGST 0x01
#define NVQ_TCP_F_DDGST 0x02
#define NVQ_TCP_F_DATA_LAST 0x04 /* H2CData, C2HData */
#define NVQ_TCP_F_DATA_SUCCESS 0x08 /* C2HData: no CapsuleResp follows */
#define NVQ_TCP_DIGEST_LEN 4
#define NVQ_TCP_PFV_1_0 0
#define NVQ_TCP_MIN_MAXH2CDATA 4096
/* Termination requests: header, then up to 128 bytes of the bad PDU. */
#define NVQ_TCP_TERM_HLEN 24
#define NVQ_TCP_TERM_MAX_PLEN 152

struct nvq_tcp_hdr {
	uint8_t type;
	uint8_t flags;
	uint8_t hlen;
	uint8_t pdo;
	uint32_t plen;
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_hdr) == 8, "PDU common header");

struct nvq_tcp_icreq {
	struct nvq_tcp_hdr hdr; /* hlen 128, plen 128 */
	uint16_t pfv;
	uint8_t hpda; /* host PDU data alignment, 0's based dwords */
	uint8_t digest; /* 0 HDGST_ENABLE, 1 DDGST_ENABLE */
	uint32_t maxr2t; /* 0's based */
	uint8_t rsvd[112];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_icreq) == 128, "ICReq");

struct nvq_tcp_icresp {
	struct nvq_tcp_hdr hdr;
	uint16_t pfv;
	uint8_t cpda;
	uint8_t digest;
	uint32_t maxh2cdata; /* bytes per H2CData PDU */
	uint8_t rsvd[112];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_icresp) == 128, "ICResp");
#define NVQ_TCP_DIGEST_HDR 0x01
#define NVQ_TCP_DIGEST_DATA 0x02

struct nvq_tcp_cmd_pdu {
	struct nvq_tcp_hdr hdr; /* hlen 72 */
	struct nvq_sqe sqe;
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_cmd_pdu) == 72, "CapsuleCmd");

struct nvq_tcp_rsp_pdu {
	struct nvq_tcp_hdr hdr; /* hlen 24 */
	struct nvq_cqe cqe;
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_rsp_pdu) == 24, "CapsuleResp");

/* H2CData and C2HData. */
struct nvq_tcp_data_pdu {
	struct nvq_tcp_hdr hdr; /* hlen 24 */
	uint16_t cccid;
	uint16_t ttag; /* H2CData: the R2T's; C2HData: reserved */
	uint32_t datao;
	uint32_t datal;
	uint8_t rsvd[4];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_data_pdu) == 24, "Data PDU");

struct nvq_tcp_r2t_pdu {
	struct nvq_tcp_hdr hdr; /* hlen 24 */
	uint16_t cccid;
	uint16_t ttag;
	uint32_t r2to;
	uint32_t r2tl;
	uint8_t rsvd[4];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_r2t_pdu) == 24, "R2T");

struct nvq_tcp_term_pdu {
	struct nvq_tcp_hdr hdr; /* hlen 24 */
	uint16_t fes;
	uint8_t fei[4]; /* field error information */
	uint8_t rsvd[10];
};
NVQ_STATIC_ASSERT(sizeof(struct nvq_tcp_term_pdu) == 24, "TermReq");
enum nvq_tcp_fes {
	NVQ_TCP_FES_INVALID_HDR = 0x01,
	NVQ_TCP_FES_PDU_SEQ = 0x02,
	NVQ_TCP_FES_HDGST = 0x03,
	NVQ_TCP_FES_DATA_RANGE = 0x04,
	NVQ_TCP_FES_LIMIT = 0x05, /* R2T or data limit exceeded */
	NVQ_TCP_FES_UNSUPPORTED = 0x06,
};

#endif /* NVQ_SPEC_H */
