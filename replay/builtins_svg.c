/*
 * CommunityModules' SVG, natively: elements are records [name, attrs, children, innerText]
 * (attrs a record of strings: the element's own coordinates, as strings, then the caller's
 * others). The operators TLC itself overrides in Java for animations (serializing, layouts)
 * are named as not implemented when evaluated; specs use them in an ALIAS, which spectap
 * does not evaluate.
 */
#include <string.h>

#include "builtins_internal.h"

/* [name |-> name, attrs |-> attrs, children |-> children, innerText |-> text] */
static int element(struct ev *ev, const struct ast *at, const char *op, const char *name, spt_val *attrs,
		   spt_val *children, spt_val *text, spt_val **out)
{
	static const char *const fields[] = { "name", "attrs", "children", "innerText" };
	spt_val *vals[4] = { spt_cstr(ev_arena(ev), name), attrs, children, text };
	if (!vals[0])
		return bi_ret(ev, at, op, NULL, out);
	return bi_ret(ev, at, op, spt_rec(ev_arena(ev), fields, vals, 4), out);
}

/* The element's own attributes (names[i] |-> ToString(ints[i])) merged with the caller's,
 * its own first (as the module's Merge keeps r1's value). */
static int own_attrs(struct ev *ev, const struct ast *at, const char *op, const char *const *names,
		     spt_val *const *ints, uint32_t k, spt_val *extra, spt_val **out)
{
	if (!spt_is_fun(extra))
		return bi_type_err(ev, at, op, (int)k + 1, "a record of attributes", extra);
	spt_val *keys[32], *vals[32];
	uint32_t n = 0;
	for (uint32_t i = 0; i < k; i++) {
		keys[n] = spt_cstr(ev_arena(ev), names[i]);
		vals[n] = ints[i]->kind == SPT_STR ? ints[i] : bi_to_string(ev, ints[i]);
		if (!keys[n] || !vals[n])
			return bi_ret(ev, at, op, NULL, out);
		n++;
	}
	for (uint32_t i = 0; i < extra->n && n < 32; i++) {
		spt_val *key = bi_fun_key(ev, extra, i);
		if (!key)
			return bi_ret(ev, at, op, NULL, out);
		bool dup = false;
		for (uint32_t j = 0; j < k && !dup; j++)
			dup = key->kind == SPT_STR && !strcmp(key->u.s, names[j]);
		if (dup)
			continue;
		keys[n] = key;
		vals[n++] = spt_fun_val(extra, i);
	}
	bool dup;
	spt_val *r = spt_fun(ev_arena(ev), keys, vals, n, &dup);
	return bi_ret(ev, at, op, r, out);
}

static int shape(struct ev *ev, const struct ast *at, const char *op, const char *name, const char *const *names,
		 uint32_t k, spt_val *const *args, spt_val *text, spt_val **out)
{
	spt_val *attrs, *none = spt_empty_fun(ev_arena(ev), SPT_SEQ);
	if (!none || own_attrs(ev, at, op, names, args, k, args[k], &attrs))
		return none ? EVAL_ERR : bi_ret(ev, at, op, NULL, out);
	return element(ev, at, op, name, attrs, none, text, out);
}

static spt_val *empty_string(struct ev *ev)
{
	return spt_cstr(ev_arena(ev), "");
}

BI(bi_svg_elem)
{
	(void)n;
	if (args[0]->kind != SPT_STR)
		return bi_type_err(ev, at, "SVGElem", 1, "a string", args[0]);
	return element(ev, at, "SVGElem", args[0]->u.s, args[1], args[2], args[3], out);
}

BI(bi_svg_line)
{
	(void)n;
	static const char *const names[] = { "x1", "y1", "x2", "y2" };
	return shape(ev, at, "Line", "line", names, 4, args, empty_string(ev), out);
}

BI(bi_svg_circle)
{
	(void)n;
	static const char *const names[] = { "cx", "cy", "r" };
	return shape(ev, at, "Circle", "circle", names, 3, args, empty_string(ev), out);
}

BI(bi_svg_rect)
{
	(void)n;
	static const char *const names[] = { "x", "y", "width", "height" };
	return shape(ev, at, "Rect", "rect", names, 4, args, empty_string(ev), out);
}

BI(bi_svg_text)
{
	(void)n;
	static const char *const names[] = { "x", "y" };
	spt_val *a[3] = { args[0], args[1], args[3] };
	return shape(ev, at, "Text", "text", names, 2, a, args[2], out);
}

BI(bi_svg_group)
{
	(void)n;
	return element(ev, at, "Group", "g", args[1], args[0], empty_string(ev), out);
}

BI(bi_svg_svg)
{
	(void)n;
	return element(ev, at, "Svg", "svg", args[1], args[0], empty_string(ev), out);
}
