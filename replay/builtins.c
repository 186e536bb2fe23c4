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
#define BGX "BagsExt"
#define FLD "Folds"
#define H(mask, fn) 0, false, mask, fn /* an operator taking operators (mask: which arguments) */

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
	{ NAT, "..", 2, bi_range_int, BI_RANGE },
	{ INT, "-.", 1, bi_neg },
	{ INT, "-", 1, bi_neg },
	/* core TLA+: sets, equality, Booleans */
	{ "", "\\cup", 2, bi_cup, BI_CUP },
	{ "", "\\union", 2, bi_cup, BI_CUP },
	{ "", "\\cap", 2, bi_cap, BI_CAP },
	{ "", "\\intersect", 2, bi_cap, BI_CAP },
	{ "", "\\", 2, bi_setminus, BI_SETMINUS },
	{ "", "\\setminus", 2, bi_setminus, BI_SETMINUS },
	{ "", "\\subseteq", 2, bi_subseteq, BI_SUBSETEQ },
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
	{ SEQ, "SelectSeq", 2, NULL, H(2, bi_select_seq) },
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
	{ TLC, "SortSeq", 2, NULL, H(2, bi_sort_seq) },
	{ TLC, "RandomElement", 1, bi_random_element, 0, true },
	{ TLC, "JavaTime", 0, bi_java_time, 0, true },
	/* FiniteSetsExt */
	{ FSX, "Max", 1, bi_max },
	{ FSX, "Min", 1, bi_min },
	{ FSX, "SumSet", 1, bi_sumset },
	{ FSX, "ProductSet", 1, bi_product_set },
	{ FSX, "FoldSet", 3, NULL, H(1, bi_fold_set) },
	{ FSX, "ReduceSet", 3, NULL, H(1, bi_reduce_set) },
	{ FSX, "Quantify", 2, NULL, H(2, bi_quantify) },
	{ FSX, "MapThenSumSet", 2, NULL, H(1, bi_map_then_sum_set) },
	{ FSX, "ChooseUnique", 2, NULL, H(2, bi_choose_unique) },
	{ FSX, "kSubset", 2, bi_ksubset },
	{ FSX, "SymDiff", 2, bi_sym_diff },
	{ FSX, "FlattenSet", 1, bi_union },
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
	{ SQX, "Remove", 2, bi_remove },
	{ SQX, "ReplaceAll", 3, bi_replace_all },
	{ SQX, "InsertAt", 3, bi_insert_at },
	{ SQX, "ReplaceAt", 3, bi_replace_at },
	{ SQX, "RemoveAt", 2, bi_remove_at },
	{ SQX, "FlattenSeq", 1, bi_flatten_seq },
	{ SQX, "Zip", 2, bi_zip },
	{ SQX, "LongestCommonPrefix", 1, bi_longest_common_prefix },
	{ SQX, "SeqOf", 2, bi_seq_of },
	{ SQX, "BoundedSeq", 2, bi_seq_of },
	{ SQX, "TupleOf", 2, bi_tuple_of },
	{ SQX, "SetToSeqs", 1, bi_set_to_seqs },
	{ SQX, "SelectInSeq", 2, NULL, H(2, bi_select_in_seq) },
	{ SQX, "SelectLastInSeq", 2, NULL, H(2, bi_select_last_in_seq) },
	{ SQX, "SelectInSubSeq", 4, NULL, H(8, bi_select_in_sub_seq) },
	{ SQX, "SelectLastInSubSeq", 4, NULL, H(8, bi_select_last_in_sub_seq) },
	{ SQX, "FoldSeq", 3, NULL, H(1, bi_fold_seq) },
	{ SQX, "FoldLeft", 3, NULL, H(1, bi_fold_left) },
	{ SQX, "FoldRight", 3, NULL, H(1, bi_fold_right) },
	{ SQX, "FoldLeftDomain", 3, NULL, H(1, bi_fold_left_domain) },
	{ SQX, "RemoveFirst", 2, bi_remove_first },
	{ SQX, "Prefixes", 1, bi_prefixes },
	{ SQX, "Suffixes", 1, bi_suffixes },
	{ SQX, "SubSeqs", 1, bi_sub_seqs },
	{ SQX, "AllSubSeqs", 1, bi_all_sub_seqs },
	{ SQX, "SeqMod", 2, bi_seq_mod },
	{ SQX, "RemoveFirstMatch", 2, NULL, H(2, bi_remove_first_match) },
	{ SQX, "FoldRightDomain", 3, NULL, H(1, bi_fold_right_domain) },
	{ SQX, "SetToSortSeq", 2, NULL, H(2, bi_set_to_sort_seq) },
	{ SQX, "IsSorted", 2, NULL, H(2, bi_is_sorted) },
	/* Functions */
	{ FUN, "Range", 1, bi_range },
	{ FUN, "Restrict", 2, bi_restrict },
	{ FUN, "IsInjective", 1, bi_injective },
	{ FUN, "Injective", 1, bi_injective },
	{ FUN, "Inverse", 3, bi_inverse },
	{ FUN, "AntiFunction", 1, bi_anti_function },
	{ FUN, "ExistsInjection", 2, bi_exists_injection },
	{ FUN, "ExistsSurjection", 2, bi_exists_surjection },
	{ FUN, "ExistsBijection", 2, bi_exists_bijection },
	{ FUN, "FoldFunction", 3, NULL, H(1, bi_fold_function) },
	{ FUN, "FoldFunctionOnSet", 4, NULL, H(1, bi_fold_function_on_set) },
	{ FUN, "RestrictDomain", 2, NULL, H(2, bi_restrict_domain) },
	{ FUN, "RestrictValues", 2, NULL, H(2, bi_restrict_values) },
	{ FUN, "Pointwise", 3, NULL, H(4, bi_pointwise) },
	/* Folds */
	{ FLD, "MapThenFoldSet", 5, NULL, H(1 | 4 | 8, bi_map_then_fold_set) },
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
	{ BAG, "BagUnion", 1, bi_bag_union },
	{ BAG, "SubBag", 1, bi_sub_bag_set },
	{ BAG, "BagOfAll", 2, NULL, H(1, bi_bag_of_all) },
	/* BagsExt */
	{ BGX, "BagAdd", 2, bi_bag_add },
	{ BGX, "BagRemove", 2, bi_bag_remove },
	{ BGX, "BagRemoveAll", 2, bi_bag_remove_all },
	{ BGX, "FoldBag", 3, NULL, H(1, bi_fold_bag) },
	/* Json, IOUtils, TLCExt */
	{ "Json", "ndJsonDeserialize", 1, bi_nd_json_deserialize },
	{ "Json", "JsonDeserialize", 1, bi_json_deserialize },
	{ "Json", "ToJson", 1, bi_to_json },
	{ "Json", "JsonSerialize", 2, bi_json_serialize, 0, true },
	{ "Json", "ndJsonSerialize", 2, bi_nd_json_serialize, 0, true },
	{ "IOUtils", "IOEnv", 0, bi_ioenv },
	{ "IOUtils", "atoi", 1, bi_atoi },
	{ "IOUtils", "IOExec", 1, NULL, 0, true, 0, NULL, "running programs from a spec is not supported" },
	{ "IOUtils", "IOExecTemplate", 2, NULL, 0, true, 0, NULL, "running programs from a spec is not supported" },
	{ "IOUtils", "IOEnvExec", 2, NULL, 0, true, 0, NULL, "running programs from a spec is not supported" },
	{ "IOUtils", "IOEnvExecTemplate", 3, NULL, 0, true, 0, NULL, "running programs from a spec is not supported" },
	{ "TLCExt", "TLCModelValue", 1, bi_tlc_model_value },
	{ "TLCExt", "AssertEq", 2, bi_assert_eq, 0, true },
	{ "TLCExt", "TLCNoOp", 1, bi_tlc_noop },
	{ "TLCExt", "TLCGetOrDefault", 2, bi_tlc_get_or_default, 0, true },
	{ "TLCExt", "TLCGetAndSet", 4, NULL, 0, true, 2, bi_tlc_get_and_set },
	{ "SVG", "SVGElem", 4, bi_svg_elem },
	{ "SVG", "Line", 5, bi_svg_line },
	{ "SVG", "Circle", 4, bi_svg_circle },
	{ "SVG", "Rect", 5, bi_svg_rect },
	{ "SVG", "Text", 4, bi_svg_text },
	{ "SVG", "Group", 2, bi_svg_group },
	{ "SVG", "Svg", 2, bi_svg_svg },
	{ "SVG", "SVGElemToString", 1, NULL, 0, true, 0, NULL, "SVG's SVGElemToString is not implemented" },
	{ "SVG", "SVGDoc", 6, NULL, 0, true, 0, NULL, "SVG's SVGDoc is not implemented" },
	{ "SVG", "SVGSerialize", 3, NULL, 0, true, 0, NULL, "SVG's SVGSerialize is not implemented" },
	{ "SVG", "Image", 6, NULL, 0, true, 0, NULL, "SVG's Image is not implemented" },
	{ "SVG", "NodeOfRingNetwork", 5, NULL, 0, true, 0, NULL, "SVG's NodeOfRingNetwork is not implemented" },
	{ "SVG", "NodesOfDirectedMultiGraph", 3, NULL, 0, true, 0, NULL, "SVG's NodesOfDirectedMultiGraph is not implemented" },
	{ "SVG", "PointOnLine", 3, NULL, 0, true, 0, NULL, "SVG's PointOnLine is not implemented" },
	{ "Bitwise", "&", 2, bi_bit_and },
	{ "Bitwise", "|", 2, bi_bit_or },
	{ "Bitwise", "^^", 2, bi_bit_xor },
	{ "Bitwise", "shiftR", 2, bi_shift_r },
	{ "VectorClocks", "IsCausalOrder", 2, NULL, H(2, bi_is_causal_order) },
	{ "VectorClocks", "CausalOrder", 4, NULL, 0, true, 0xe, NULL,
	  "VectorClocks' CausalOrder (TLC's Java sort of a log by vector clocks) is not implemented" },
	{ "Relation", "IsReflexive", 2, bi_rel_reflexive },
	{ "Relation", "IsReflexiveUnder", 2, NULL, H(1, bi_rel_reflexive_under) },
	{ "Relation", "IsIrreflexive", 2, bi_rel_irreflexive },
	{ "Relation", "IsIrreflexiveUnder", 2, NULL, H(1, bi_rel_irreflexive_under) },
	{ "Relation", "IsSymmetric", 2, bi_rel_symmetric },
	{ "Relation", "IsSymmetricUnder", 2, NULL, H(1, bi_rel_symmetric_under) },
	{ "Relation", "IsAntiSymmetric", 2, bi_rel_antisymmetric },
	{ "Relation", "IsAntiSymmetricUnder", 2, NULL, H(1, bi_rel_antisymmetric_under) },
	{ "Relation", "IsAsymmetric", 2, bi_rel_asymmetric },
	{ "Relation", "IsAsymmetricUnder", 2, NULL, H(1, bi_rel_asymmetric_under) },
	{ "Relation", "IsTransitive", 2, bi_rel_transitive },
	{ "Relation", "IsTransitiveUnder", 2, NULL, H(1, bi_rel_transitive_under) },
	{ "Relation", "IsStrictlyPartiallyOrdered", 2, bi_rel_strict_partial },
	{ "Relation", "IsStrictlyPartiallyOrderedUnder", 2, NULL, H(1, bi_rel_strict_partial_under) },
	{ "Relation", "IsPartiallyOrdered", 2, bi_rel_partial },
	{ "Relation", "IsPartiallyOrderedUnder", 2, NULL, H(1, bi_rel_partial_under) },
	{ "Relation", "IsStrictlyTotallyOrdered", 2, bi_rel_strict_total },
	{ "Relation", "IsStrictlyTotallyOrderedUnder", 2, NULL, H(1, bi_rel_strict_total_under) },
	{ "Relation", "IsTotallyOrdered", 2, bi_rel_total },
	{ "Relation", "IsTotallyOrderedUnder", 2, NULL, H(1, bi_rel_total_under) },
	{ "Relation", "TransitiveClosure", 2, bi_rel_transitive_closure },
	{ "Relation", "ReflexiveTransitiveClosure", 2, bi_rel_reflexive_transitive_closure },
	{ "Relation", "IsConnected", 2, bi_rel_connected },
	{ "UndirectedGraphs", "IsUndirectedGraph", 1, bi_is_undirected_graph },
	{ "UndirectedGraphs", "IsLoopFreeUndirectedGraph", 1, bi_is_loop_free_undirected_graph },
	{ "UndirectedGraphs", "AreConnectedIn", 3, bi_are_connected_in },
	{ "UndirectedGraphs", "ConnectedComponents", 1, bi_connected_components },
	{ "UndirectedGraphs", "IsStronglyConnected", 1, bi_is_strongly_connected },
	{ "UndirectedGraphs", "Path", 1, NULL, 0, true, 0, NULL, "UndirectedGraphs' Path (an infinite set) is not implemented" },
	{ "UndirectedGraphs", "SimplePath", 1, NULL, 0, true, 0, NULL, "UndirectedGraphs' SimplePath is not implemented" },
	{ "UndirectedGraphs", "UndirectedSubgraph", 1, NULL, 0, true, 0, NULL, "UndirectedGraphs' UndirectedSubgraph is not implemented" },
	{ "UndirectedGraphs", "UndirectedGraphs", 1, NULL, 0, true, 0, NULL, "UndirectedGraphs' UndirectedGraphs is not implemented" },
	{ "TLCExt", "Trace", 0, bi_trace, 0, true },
	{ "TLCExt", "AssertError", 2, NULL, BI_ASSERT_ERROR, true }, /* (evaluated by assert_error.c) */
	{ "TLCExt", "TLCDefer", 1, NULL, BI_DEFER, true },
	{ "TLCExt", "PickSuccessor", 1, bi_pick_successor, 0, true },
	{ "TLCExt", "CounterExample", 0, bi_counter_example, 0, true },
	{ "TLCExt", "ToTrace", 1, bi_to_trace },
	{ NULL, NULL, 0, NULL },
};

/* Modules whose EXTENDS bring in another module's native operators. */
static const struct {
	const char *module, *extends;
} extends[] = {
	{ INT, NAT }, { BAG, NAT },
	{ FSX, INT }, { FSX, FS }, { FSX, FUN },
	{ SQX, SEQ }, { SQX, NAT }, { SQX, FS }, { SQX, FSX }, { SQX, FUN }, { SQX, TLC }, { SQX, FLD },
	{ FSX, FLD }, { FUN, FLD }, { BGX, BAG }, { BGX, FLD }, { "Relation", NAT }, { "Relation", FS },
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
