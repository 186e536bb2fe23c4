/* Internal: the framing of *.spt files (magic frame, zstd frames, footer). */
#ifndef SPECTAP_TRACE_FRAME_H
#define SPECTAP_TRACE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zstd.h>

#include "spectap/buf.h"

/* Skippable zstd frames (magic 0x184D2A5?) that zstd -d passes over. */
#define SPT_MAGIC_FRAME_ID 0x184D2A50u
#define SPT_FOOTER_FRAME_ID 0x184D2A5Eu
#define SPT_MAGIC_PAYLOAD "SPECTAP\0"
#define SPT_MAGIC_FRAME_LEN (8 + 12)  /* frame header + "SPECTAP\0" + u32 version */
#define SPT_FOOTER_LEN (8 + 16)       /* frame header + u64 offset + u32 length + "SPTI" */
#define SPT_MAX_CHUNK_CONTENT (256u << 20)

void frame_put_magic(struct spt_buf *b, uint32_t version);
/* 0 and *version, or -EBADMSG when p does not start with the magic frame. */
int frame_check_magic(const uint8_t *p, size_t len, uint32_t *version);
void frame_put_footer(struct spt_buf *b, uint64_t index_off, uint32_t index_len);
/* 0 when the file's last SPT_FOOTER_LEN bytes are a footer; fills the index location. */
int frame_get_footer(const uint8_t *p, size_t len, uint64_t *index_off, uint32_t *index_len);

/* Whether the frame at p runs past the end (len bytes left): a writer stopped while writing it. */
bool frame_is_torn(const uint8_t *p, size_t len);

/*
 * Finds the zstd frame at p and decompresses it into out (replacing its content). Checks the
 * frame has a content size and a checksum, both verified. 0 and *frame_len, or -EBADMSG with a
 * reason in why. dctx is reused from call to call (creating one per frame costs more than
 * decoding a small frame); NULL makes a temporary one.
 */
int frame_decode(ZSTD_DCtx *dctx, const uint8_t *p, size_t len, struct spt_buf *out,
		 size_t *frame_len, char *why, size_t why_len);

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/* Whether p starts a skippable frame (magic 0x184D2A5?), as the magic and footer frames are. */
static inline bool frame_is_skippable(const uint8_t *p, size_t len)
{
	return len >= 4 && (get_le32(p) & 0xFFFFFFF0u) == SPT_MAGIC_FRAME_ID;
}

#endif
