/* The table of native standard-module operators and its lookup by module, name and arity. */
#include "builtins_internal.h"

#include <string.h>

#define NAT "Naturals"
#define INT "Integers"
#define FS "FiniteSets"
#define SEQ "Sequences"
#define TLC "TLC"
#define FSX "FiniteSetsExt"
#define SQX "SequencesExt"
#define FUN "Functions"
#define BAG "Bags"

const struct builtin builtins[] = {
	/* Naturals / Integers */
	{ NAT, "+", 2, bi_plus },
	{ NAT, "-", 2, bi_minus },
	{ NAT, "*", 2, bi_times },
	{ NAT, "\\div", 2, bi_div },
	{ NAT, "%", 2, bi_mod },
	{ NAT, "^", 2, bi_pow },
	{ NAT, "<", 2, bi_lt },
	{ NAT, ">", 2, bi_gt },
	{ NAT, "<=", 2, bi_le },
	{ NAT, "=<", 2, bi_le },
	{ NAT, "\\leq", 2, bi_le },
	{ NAT, ">=", 2, bi_ge },
	{ NAT, "\\geq", 2, bi_ge },
	{ NAT, "..", 2, bi_range_int },
	{ INT, "-.", 1, bi_neg },
	{ INT, "-", 1, bi_neg },
	/* core TLA+: sets, equality, Booleans */
	{ "", "\\cup", 2, bi_cup },
	{ "", "\\union", 2, bi_cup },
	{ "", "\\cap", 2, bi_cap },
	{ "", "\\intersect", 2, bi_cap },
	{ "", "\\", 2, bi_setminus },
	{ "", "\\setminus", 2, bi_setminus },
	{ "", "\\subseteq", 2, bi_subseteq },
	{ "", "SUBSET", 1, bi_subset, BI_SUBSET },
	{ "", "UNION", 1, bi_union },
	{ "", "DOMAIN", 1, bi_domain },
	{ "", "\\in", 2, bi_in, BI_IN },
	{ "", "\\notin", 2, bi_notin, BI_NOTIN },
	{ "", "=>", 2, NULL, BI_IMPLIES },
	{ "", "\\times", -1, bi_times_set },
	{ "", "\\X", -1, bi_times_set },
	{ "", "=", 2, bi_eq, BI_EQ },
	{ "", "#", 2, bi_neq },
	{ "", "/=", 2, bi_neq },
	{ "", "\\lnot", 1, bi_not },
	{ "", "\\neg", 1, bi_not },
	{ "", "~", 1, bi_not },
	{ "", "\\equiv", 2, bi_equiv },
	{ "", "<=>", 2, bi_equiv },
	/* FiniteSets */
	{ FS, "Cardinality", 1, bi_cardinality },
	{ FS, "IsFiniteSet", 1, bi_is_finite_set },
	/* Sequences */
	{ SEQ, "Len", 1, bi_len },
	{ SEQ, "Head", 1, bi_head },
	{ SEQ, "Tail", 1, bi_tail },
	{ SEQ, "Append", 2, bi_append },
	{ SEQ, "\\o", 2, bi_concat },
	{ SEQ, "\\circ", 2, bi_concat },
	{ SEQ, "SubSeq", 3, bi_subseq },
	{ SEQ, "Seq", 1, NULL, BI_SEQSET },
	/* TLC */
	{ TLC, ":>", 2, bi_one_point },
	{ TLC, "@@", 2, bi_merge },
	{ TLC, "Print", 2, bi_print, 0, true },
	{ TLC, "PrintT", 1, bi_printt, 0, true },
	{ TLC, "Assert", 2, bi_assert },
	{ TLC, "ToString", 1, bi_tostring },
	{ TLC, "Permutations", 1, bi_permutations },
	{ TLC, "TLCEval", 1, bi_tlceval },
	{ TLC, "TLCSet", 2, bi_tlcset, 0, true },
	{ TLC, "TLCGet", 1, bi_tlcget, 0, true },
	/* FiniteSetsExt */
	{ FSX, "Max", 1, bi_max },
	{ FSX, "Min", 1, bi_min },
	{ FSX, "SumSet", 1, bi_sumset },
	/* SequencesExt */
	{ SQX, "ToSet", 1, bi_to_set },
	{ SQX, "SetToSeq", 1, bi_set_to_seq },
	{ SQX, "Reverse", 1, bi_reverse },
	{ SQX, "Last", 1, bi_last },
	{ SQX, "Front", 1, bi_front },
	{ SQX, "Cons", 2, bi_cons },
	{ SQX, "Snoc", 2, bi_snoc },
	{ SQX, "IsPrefix", 2, bi_is_prefix },
	{ SQX, "IsStrictPrefix", 2, bi_is_strict_prefix },
	{ SQX, "IsSuffix", 2, bi_is_suffix },
	{ SQX, "IsStrictSuffix", 2, bi_is_strict_suffix },
	{ SQX, "Contains", 2, bi_contains },
	/* Functions */
	{ FUN, "Range", 1, bi_range },
	{ FUN, "Restrict", 2, bi_restrict },
	{ FUN, "IsInjective", 1, bi_injective },
	{ FUN, "Injective", 1, bi_injective },
	/* Bags */
	{ BAG, "EmptyBag", 0, bi_empty_bag },
	{ BAG, "SetToBag", 1, bi_set_to_bag },
	{ BAG, "BagToSet", 1, bi_bag_to_set },
	{ BAG, "BagIn", 2, bi_bag_in },
	{ BAG, "CopiesIn", 2, bi_copies_in },
	{ BAG, "BagCardinality", 1, bi_bag_cardinality },
	{ BAG, "(+)", 2, bi_bag_plus },
	{ BAG, "(-)", 2, bi_bag_minus },
	{ BAG, "\\sqsubseteq", 2, bi_sub_bag },
	{ BAG, "IsABag", 1, bi_is_a_bag },
	{ NULL, NULL, 0, NULL },
};

/* Modules whose EXTENDS bring in another module's native operators. */
static const struct {
	const char *module, *extends;
} extends[] = {
	{ INT, NAT }, { BAG, NAT },
	{ FSX, INT }, { FSX, FS }, { FSX, FUN },
	{ SQX, SEQ }, { SQX, NAT }, { SQX, FS }, { SQX, FSX }, { SQX, FUN }, { SQX, TLC },
};

/* Whether operators of `def` are visible in `module`; depth bounds a (never expected) cycle. */
static bool visible(const char *module, const char *def, int depth)
{
	if (def[0] == '\0' || strcmp(module, def) == 0)
		return true;
	for (size_t i = 0; depth > 0 && i < sizeof(extends) / sizeof(extends[0]); i++)
		if (strcmp(extends[i].module, module) == 0 && visible(extends[i].extends, def, depth - 1))
			return true;
	return false;
}

/* module NULL: any module (for tools that resolve names themselves). */
const struct builtin *builtin_lookup(const char *module, const char *name, uint32_t arity)
{
	for (const struct builtin *b = builtins; b->name; b++) {
		if (strcmp(b->name, name) != 0)
			continue;
		if (b->arity >= 0 && (uint32_t)b->arity != arity)
			continue;
		if (!module || visible(module, b->module, 4))
			return b;
	}
	return NULL;
}

const struct builtin *builtin_lookup_any(const char *module, const char *name)
{
	for (const struct builtin *b = builtins; b->name; b++)
		if (!strcmp(b->name, name) && (!module || visible(module, b->module, 4)))
			return b;
	return NULL;
}
