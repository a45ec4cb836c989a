/* SPDX-License-Identifier: MIT */
/*
 * The guard tag of NVMe 16b Guard protection information (NVM Command Set
 * Specification, "16b Guard Protection Information"): CRC16 T10-DIF,
 * polynomial 0x8BB7, not reflected, initial value 0, no final xor.
 * crc_t10dif("123456789") = 0xD0DB.
 *
 * Shared by the driver (lib/) and the emulated controller (emu/), which
 * otherwise know nothing of each other: both compile this one file.
 */
#ifndef NVQ_CRC_T10DIF_H
#define NVQ_CRC_T10DIF_H

#include <stddef.h>
#include <stdint.h>

/* CRC16 T10-DIF of @len bytes at @buf, continuing from @crc (0 to start). */
uint16_t nvq_crc_t10dif_update(uint16_t crc, const void *buf, size_t len);

#endif /* NVQ_CRC_T10DIF_H */
