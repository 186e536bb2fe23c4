/* TLA+ notation for values, as TLC prints them. */
#include "spectap/value.h"

#include <ctype.h>

static void print_string(FILE *f, const char *s, uint32_t n)
{
	fputc('"', f);
	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Record fields print as [a |-> 1] only when every name is a TLA+ identifier. */
static bool is_identifier(spt_val *k)
{
	bool letter = false;
	if (k->n == 0)
		return false;
	for (uint32_t i = 0; i < k->n; i++) {
		unsigned char c = (unsigned char)k->u.s[i];
		if (isalpha(c))
			letter = true;
		else if (!isdigit(c) && c != '_')
			return false;
	}
	return letter;
}

static void print_elems(FILE *f, spt_val *v, const char *open, const char *close)
{
	fputs(open, f);
	for (uint32_t i = 0; i < v->n; i++) {
		if (i)
			fputs(", ", f);
		spt_value_print(f, v->u.elems[i]);
	}
	fputs(close, f);
}

int spt_value_print(FILE *f, spt_val *v)
{
	switch (v->kind) {
	case SPT_BOOL:
		fputs(v->u.b ? "TRUE" : "FALSE", f);
		break;
	case SPT_INT:
		fprintf(f, "%lld", (long long)v->u.i);
		break;
	case SPT_STR:
		print_string(f, v->u.s, v->n);
		break;
	case SPT_MODEL:
		fwrite(v->u.s, 1, v->n, f);
		break;
	case SPT_SET:
		print_elems(f, v, "{", "}");
		break;
	case SPT_SEQ:
		print_elems(f, v, "<<", ">>");
		break;
	case SPT_REC:
	case SPT_FUN: {
		if (v->n == 0) {
			fputs("<<>>", f);
			break;
		}
		bool rec = v->kind == SPT_REC;
		for (uint32_t i = 0; rec && i < v->n; i++)
			rec = is_identifier(v->u.fn.keys[i]);
		fputs(rec ? "[" : "(", f);
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				fputs(rec ? ", " : " @@ ", f);
			if (rec)
				fwrite(v->u.fn.keys[i]->u.s, 1, v->u.fn.keys[i]->n, f);
			else
				spt_value_print(f, v->u.fn.keys[i]);
			fputs(rec ? " |-> " : " :> ", f);
			spt_value_print(f, v->u.fn.vals[i]);
		}
		fputs(rec ? "]" : ")", f);
		break;
	}
	}
	return ferror(f) ? -1 : 0;
}
