/* Framing of *.spt files: skippable magic and footer frames, checked zstd frames. */
#include "trace_frame.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

void frame_put_magic(struct spt_buf *b, uint32_t version)
{
	uint8_t f[SPT_MAGIC_FRAME_LEN];
	put_le32(f, SPT_MAGIC_FRAME_ID);
	put_le32(f + 4, 12);
	memcpy(f + 8, SPT_MAGIC_PAYLOAD, 8);
	put_le32(f + 16, version);
	spt_buf_put(b, f, sizeof(f));
}

int frame_check_magic(const uint8_t *p, size_t len, uint32_t *version)
{
	if (len < SPT_MAGIC_FRAME_LEN || get_le32(p) != SPT_MAGIC_FRAME_ID || get_le32(p + 4) != 12 ||
	    memcmp(p + 8, SPT_MAGIC_PAYLOAD, 8))
		return -EBADMSG;
	*version = get_le32(p + 16);
	return 0;
}

void frame_put_footer(struct spt_buf *b, uint64_t index_off, uint32_t index_len)
{
	uint8_t f[SPT_FOOTER_LEN];
	put_le32(f, SPT_FOOTER_FRAME_ID);
	put_le32(f + 4, 16);
	put_le32(f + 8, (uint32_t)index_off);
	put_le32(f + 12, (uint32_t)(index_off >> 32));
	put_le32(f + 16, index_len);
	memcpy(f + 20, "SPTI", 4);
	spt_buf_put(b, f, sizeof(f));
}

int frame_get_footer(const uint8_t *p, size_t len, uint64_t *index_off, uint32_t *index_len)
{
	if (len < SPT_FOOTER_LEN)
		return -EBADMSG;
	const uint8_t *f = p + len - SPT_FOOTER_LEN;
	if (get_le32(f) != SPT_FOOTER_FRAME_ID || get_le32(f + 4) != 16 || memcmp(f + 20, "SPTI", 4))
		return -EBADMSG;
	*index_off = (uint64_t)get_le32(f + 8) | (uint64_t)get_le32(f + 12) << 32;
	*index_len = get_le32(f + 16);
	return 0;
}

bool frame_is_torn(const uint8_t *p, size_t len)
{
	if (len < 8)
		return true;
	if (frame_is_skippable(p, len))
		return 8 + (uint64_t)get_le32(p + 4) > len;
	size_t fl = ZSTD_findFrameCompressedSize(p, len);
	return ZSTD_isError(fl) && ZSTD_getErrorCode(fl) == ZSTD_error_srcSize_wrong;
}

int frame_decode(ZSTD_DCtx *dctx, const uint8_t *p, size_t len, struct spt_buf *out,
		 size_t *frame_len, char *why, size_t why_len)
{
	size_t fl = ZSTD_findFrameCompressedSize(p, len);
	if (ZSTD_isError(fl)) {
		snprintf(why, why_len, "torn or invalid zstd frame (%s)", ZSTD_getErrorName(fl));
		return -EBADMSG;
	}
	/* RFC 8878: magic, then the frame header descriptor; bit 2 is Content_Checksum_flag. */
	if (fl < 5 || get_le32(p) != 0xFD2FB528u) {
		snprintf(why, why_len, "not a zstd data frame");
		return -EBADMSG;
	}
	unsigned long long content = ZSTD_getFrameContentSize(p, fl);
	if (!(p[4] & 0x04) || content == ZSTD_CONTENTSIZE_UNKNOWN ||
	    content == ZSTD_CONTENTSIZE_ERROR || content > SPT_MAX_CHUNK_CONTENT) {
		snprintf(why, why_len, "zstd frame without checksum or with a bad content size");
		return -EBADMSG;
	}
	size_t n = (size_t)content;
	spt_buf_clear(out);
	if (!spt_buf_reserve(out, n + 1))
		return -ENOMEM;
	size_t got = dctx ? ZSTD_decompressDCtx(dctx, out->p, n, p, fl) : ZSTD_decompress(out->p, n, p, fl);
	if (ZSTD_isError(got) || got != n) {
		snprintf(why, why_len, "zstd frame does not decode (%s)",
			 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short content");
		return -EBADMSG;
	}
	out->len = n;
	*frame_len = fl;
	return 0;
}
