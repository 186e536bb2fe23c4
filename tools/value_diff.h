/* Where two values differ: the paths into records, functions, sequences and sets at which an
 * expected value and a reached one part, each with both sides, for diagnoses of large values. */
#ifndef SPECTAP_TOOLS_VALUE_DIFF_H
#define SPECTAP_TOOLS_VALUE_DIFF_H

#include "spectap/buf.h"
#include "spectap/value.h"

/* Appends one line per difference to out ("<indent>name.f[k]  expected X, reached Y"), at most
 * max lines (then "... and more differences"); each side cut to about width characters. */
void value_diff(struct spt_buf *out, const char *name, spt_val *expected, spt_val *reached, const char *indent,
		unsigned max, unsigned width);

#endif
