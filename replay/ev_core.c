/* The evaluation context's error reporting and value display. */
#include "ev_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ev_init(struct ev *ev, struct spt_arena *a)
{
	memset(ev, 0, sizeof(*ev));
	ev->arena = a;
}

void ev_fini(struct ev *ev)
{
	spt_buf_free(&ev->show);
	spt_buf_free(&ev->show2);
}

void ev_clear_error(struct ev *ev)
{
	ev->failed = false;
	ev->err.msg[0] = '\0';
	ev->err.unsupported = false;
	ev->assert_msg = NULL;
}

struct spt_arena *ev_arena(struct ev *ev) { return ev->arena; }

int ev_fail(struct ev *ev, const struct ast *at, const char *fmt, ...)
{
	if (ev->failed)
		return EVAL_ERR; /* keep the innermost, first error */
	ev->failed = true;
	ev->assert_msg = NULL;
	if (at)
		ev->err.pos = at->pos;
	else
		memset(&ev->err.pos, 0, sizeof(ev->err.pos));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ev->err.msg, sizeof(ev->err.msg), fmt, ap);
	va_end(ap);
	return EVAL_ERR;
}

int ev_unsupported(struct ev *ev, const struct ast *at, const char *fmt, ...)
{
	if (ev->failed)
		return EVAL_ERR;
	char msg[sizeof(ev->err.msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev_fail(ev, at, "%s", msg);
	ev->err.unsupported = true;
	return EVAL_ERR;
}

const char *ev_show(struct ev *ev, spt_val *v)
{
	struct spt_buf *b = ev->show_flip ? &ev->show2 : &ev->show;
	ev->show_flip = !ev->show_flip;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return "<value>";
	spt_value_print(f, v);
	fclose(f);
	spt_buf_clear(b);
	if (len > 200) {
		spt_buf_put(b, text, 197);
		spt_buf_puts(b, "...");
	} else {
		spt_buf_put(b, text, len);
	}
	free(text);
	return b->p && !b->oom ? b->p : "<value>";
}

int ev_int_arg(struct ev *ev, const struct ast *at, spt_val *v, const char *what, int64_t *out)
{
	if (v->kind != SPT_INT)
		return ev_fail(ev, at, "%s must be an integer, not %s", what, ev_show(ev, v));
	*out = v->u.i;
	return 0;
}
