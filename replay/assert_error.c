/*
 * TLCExt's AssertError(err, exp), as TLC's Java override evaluates it: err must be a string
 * literal; exp is evaluated, and the result is TRUE exactly when that fails with an error whose
 * message is err (an exp that evaluates, to any value, gives FALSE).
 *
 * The answer depends on TLC's own error text. spectap gives it where it knows that text: a
 * failed Assert(c, msg) with msg a string, whose TLC message is a fixed sentence followed by msg
 * as TLC prints a string. Any other error of exp leaves the answer unknown: an error naming
 * AssertError, never a verdict.
 */
#include <stdio.h>
#include <string.h>

#include "interp.h"

/* TLC's EC.TLC_VALUE_ASSERT_FAILED text, then the message as StringValue prints it (quoted,
 * with its escapes). */
static const char assert_failed[] = "The first argument of Assert evaluated to FALSE; the second argument was:\n";

static bool tlc_assert_text_is(const spt_val *msg, const spt_val *err)
{
	size_t head = sizeof(assert_failed) - 1;
	if (err->n < head + 2 || memcmp(err->u.s, assert_failed, head) != 0)
		return false;
	const char *p = err->u.s + head, *end = err->u.s + err->n;
	if (*p++ != '"')
		return false;
	for (uint32_t i = 0; i < msg->n; i++) {
		char ch = msg->u.s[i], esc = 0;
		switch (ch) {
		case '"': esc = '"'; break;
		case '\\': esc = '\\'; break;
		case '\t': esc = 't'; break;
		case '\n': esc = 'n'; break;
		case '\f': esc = 'f'; break;
		case '\r': esc = 'r'; break;
		default: break;
		}
		if (esc) {
			if (end - p < 2 || p[0] != '\\' || p[1] != esc)
				return false;
			p += 2;
		} else {
			if (p == end || *p != ch)
				return false;
			p++;
		}
	}
	return end - p == 1 && *p == '"';
}

int eval_assert_error(struct interp *in, struct ctx c, const struct ast *e, spt_val **out)
{
	if (e->n != 2)
		return ev_fail(&in->ev, e, "AssertError takes 2 arguments");
	const struct ast *err = e->a[0];
	if (err->kind != A_STR)
		return ev_fail(&in->ev, err, "In computing AssertError, a non-string expression was used as the err of an "
					     "AssertError(err, exp) (TLC requires a string literal)");
	if (in->ev.failed)
		return EVAL_ERR;
	spt_val *v;
	if (!eval(in, c, e->a[1], &v)) {
		*out = spt_bool(in->ev.arena, false);
		return 0;
	}
	spt_val *msg = in->ev.assert_msg;
	if (interp_time_up || !msg || msg->kind != SPT_STR) {
		/* Not an error whose TLC text is known: say so, with the error itself. */
		char orig[sizeof(in->ev.err.msg)];
		snprintf(orig, sizeof(orig), "%s", in->ev.err.msg);
		struct src_pos at = in->ev.err.pos;
		if (interp_time_up)
			return EVAL_ERR;
		ev_clear_error(&in->ev);
		ev_unsupported(&in->ev, e,
			       "AssertError is not supported here: its expression fails with an error whose TLC message "
			       "spectap does not reproduce (only a failed Assert with a string message), so whether it equals "
			       "err is unknown: %s (at %s:%u:%u)",
			       orig, at.file ? at.file : "?", at.line, at.col);
		return EVAL_ERR;
	}
	bool same = tlc_assert_text_is(msg, err->str);
	ev_clear_error(&in->ev);
	*out = spt_bool(in->ev.arena, same);
	return 0;
}
