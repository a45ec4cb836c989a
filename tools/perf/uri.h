/* SPDX-License-Identifier: MIT */
/*
 * The namespace a device URI names. Tools that take one URI write the
 * namespace as a "/NSID" suffix (docs/vfio.md):
 *   vfio:DDDD:BB:DD.F/NSID[,opts]  the library's vfio grammar: its parser
 *                                 (nvq_vfio_parse()) reads it, and opening
 *                                 ignores it;
 *   emu:[key=val,...]/NSID        at the very end; the emulator's parser
 *                                 knows no suffix, so it comes off before
 *                                 the URI is opened.
 * So a last emu parameter whose value ends in "/NUMBER" (lat=80us/20, a
 * bare number being nanoseconds; fault=status:2/128) reads as a suffix:
 * give the number a unit or hex form (lat=80us/20ns, status:2/0x80) or
 * put another parameter after it.
 */
#ifndef NVQ_PERF_URI_H
#define NVQ_PERF_URI_H

#include <stddef.h>
#include <stdint.h>

/*
 * For an emu: @uri, take a trailing "/NSID" off: *@nsid gets it (0 when
 * there is none) and @buf (@len bytes) the URI without it; *@open is @buf
 * or, with nothing taken off, @uri. Other schemes come back unchanged with
 * *@nsid 0. Returns 0, or -EINVAL with a message in @err for a suffix
 * that is no namespace id (0, above 0xfffffffe, empty) or a URI longer
 * than @buf.
 */
int perf_uri_split_nsid(const char *uri, char *buf, size_t len,
			const char **open, uint32_t *nsid, char *err,
			size_t errlen);

#endif /* NVQ_PERF_URI_H */
