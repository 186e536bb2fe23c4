/* Internal: helpers shared by the builtin operator files and the operators themselves. */
#ifndef SPECTAP_REPLAY_BUILTINS_INTERNAL_H
#define SPECTAP_REPLAY_BUILTINS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "eval.h"
#include "spectap/value.h"

/* Largest set a builtin enumerates (a..b, \X, UNION): bounds memory on a typo like 1..10^9. */
#define BI_MAX_ELEMS ((uint64_t)1 << 20)

/* Print/PrintT write here; NULL means stderr (tests capture it). */
extern FILE *bi_print_stream;

/* "op applies to WHAT, not V" (argno 0) or "the Nth argument of op must be WHAT, not V". */
int bi_type_err(struct ev *ev, const struct ast *at, const char *op, int argno, const char *what,
		spt_val *v);
/* Stores v in *out; a NULL v (constructor out of memory) becomes an error. */
int bi_ret(struct ev *ev, const struct ast *at, const char *op, spt_val *v, spt_val **out);
int bi_ret_bool(struct ev *ev, const struct ast *at, const char *op, bool b, spt_val **out);
int bi_ret_int(struct ev *ev, const struct ast *at, const char *op, int64_t i, spt_val **out);

int bi_int(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, int64_t *i);
int bi_boolean(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, bool *b);
int bi_set(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v);
/* v's elements in TLC's order (replay/tlc_order.h), where an operator's result shows it
 * (SetToSeq, FoldSet); an error if v is not a set or TLC cannot order it. */
int bi_tlc_elems(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v, spt_val *const **out);
int bi_fun(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v);

/* A sequence's elements: SPT_SEQ, or any empty function (which is <<>>). */
struct bi_seq {
	spt_val *const *e;
	uint32_t n;
};
bool bi_as_seq(spt_val *v, struct bi_seq *s);
/* The sequence s without its element at index i0 (0-based, < s->n) (builtins_ext.c). */
int bi_seq_without(struct ev *ev, const struct ast *at, const char *op, const struct bi_seq *s, uint32_t i0,
		   spt_val **out);
int bi_seq(struct ev *ev, const struct ast *at, const char *op, int argno, spt_val *v,
	   struct bi_seq *s);

/* A function's i-th key as a value of the arena (a sequence's keys are not stored). */
spt_val *bi_fun_key(struct ev *ev, spt_val *f, uint32_t i);

/* TLC's equality: 1 equal, 0 unequal, EVAL_ERR when it meets two values of different kinds
 * (a set and an integer, ...) neither of which is a model value. */
int bi_equal(struct ev *ev, const struct ast *at, const char *op, spt_val *x, spt_val *y);
/* Comparison class of a value, in canonical order: all function kinds are one class. */
enum { BI_C_BOOL, BI_C_INT, BI_C_STR, BI_C_MODEL, BI_C_SET, BI_C_FUN };
int bi_class(spt_val *v);

/* The value in TLA+ notation, as an SPT_STR; NULL when out of memory. */
spt_val *bi_to_string(struct ev *ev, spt_val *v);

/* ---- the operators (args already evaluated; arity checked by the caller) ---- */
#define BI(name) \
	int name(struct ev *ev, const struct ast *at, spt_val *const *args, uint32_t n, spt_val **out)

/* builtins_svg.c */
BI(bi_svg_elem); BI(bi_svg_line); BI(bi_svg_circle); BI(bi_svg_rect); BI(bi_svg_text); BI(bi_svg_group);
BI(bi_svg_svg);

/* builtins_bitwise.c */
BI(bi_bit_and); BI(bi_bit_or); BI(bi_bit_xor); BI(bi_shift_r);

/* builtins_graphs.c */
BI(bi_is_undirected_graph); BI(bi_is_loop_free_undirected_graph); BI(bi_are_connected_in);
BI(bi_connected_components); BI(bi_is_strongly_connected);

/* builtins_arith.c */
BI(bi_plus); BI(bi_minus); BI(bi_neg); BI(bi_times); BI(bi_div); BI(bi_mod); BI(bi_pow);
BI(bi_lt); BI(bi_gt); BI(bi_le); BI(bi_ge); BI(bi_range_int);

/* builtins_sets.c */
BI(bi_cup); BI(bi_cap); BI(bi_setminus); BI(bi_subseteq); BI(bi_subset); BI(bi_union);
BI(bi_domain); BI(bi_in); BI(bi_notin); BI(bi_times_set); BI(bi_cardinality);
BI(bi_is_finite_set); BI(bi_max); BI(bi_min); BI(bi_sumset);

/* builtins_logic.c */
BI(bi_eq); BI(bi_neq); BI(bi_not); BI(bi_equiv);

/* builtins_seq.c */
BI(bi_len); BI(bi_head); BI(bi_tail); BI(bi_append); BI(bi_concat); BI(bi_subseq);
BI(bi_to_set); BI(bi_reverse); BI(bi_last); BI(bi_front); BI(bi_cons); BI(bi_snoc);
BI(bi_is_prefix); BI(bi_is_strict_prefix); BI(bi_is_suffix); BI(bi_is_strict_suffix);
BI(bi_contains); BI(bi_set_to_seq);

/* builtins_fun.c */
BI(bi_one_point); BI(bi_merge); BI(bi_range); BI(bi_restrict); BI(bi_injective);
BI(bi_permutations);

/* builtins_bags.c */
BI(bi_empty_bag); BI(bi_set_to_bag); BI(bi_bag_to_set); BI(bi_bag_in); BI(bi_copies_in);
BI(bi_bag_cardinality); BI(bi_bag_plus); BI(bi_bag_minus); BI(bi_sub_bag); BI(bi_is_a_bag);

/* builtins_tlc.c */
BI(bi_print); BI(bi_printt); BI(bi_assert); BI(bi_trace); BI(bi_tostring); BI(bi_tlceval); BI(bi_tlcset); BI(bi_tlcget);
BI(bi_tlc_get_or_default);

/* builtins_ext.c */
BI(bi_remove); BI(bi_remove_first); BI(bi_replace_all); BI(bi_prefixes); BI(bi_suffixes);
BI(bi_sub_seqs); BI(bi_all_sub_seqs); BI(bi_seq_mod); BI(bi_insert_at); BI(bi_replace_at); BI(bi_remove_at);
BI(bi_flatten_seq); BI(bi_zip); BI(bi_longest_common_prefix); BI(bi_seq_of); BI(bi_tuple_of);
BI(bi_set_to_seqs); BI(bi_ksubset); BI(bi_sym_diff); BI(bi_product_set); BI(bi_inverse);
BI(bi_anti_function); BI(bi_exists_injection); BI(bi_exists_surjection); BI(bi_exists_bijection);
BI(bi_bag_add); BI(bi_bag_remove); BI(bi_bag_remove_all); BI(bi_bag_union); BI(bi_sub_bag_set);
BI(bi_random_element); BI(bi_java_time);

/* builtins_io.c */
BI(bi_nd_json_deserialize); BI(bi_json_deserialize); BI(bi_to_json); BI(bi_json_serialize);
BI(bi_nd_json_serialize); BI(bi_ioenv); BI(bi_atoi); BI(bi_tlc_model_value); BI(bi_assert_eq); BI(bi_tlc_noop); BI(bi_pick_successor); BI(bi_counter_example); BI(bi_to_trace);

/* builtins_hof.c: operators taking operators */
#define HBI_DECL(name) \
	int name(struct ev *ev, const struct ast *at, spt_val *const *args, const struct closure *const *ops, \
		 uint32_t n, spt_val **out)
HBI_DECL(bi_select_seq); HBI_DECL(bi_select_in_seq); HBI_DECL(bi_select_last_in_seq);
HBI_DECL(bi_select_in_sub_seq); HBI_DECL(bi_select_last_in_sub_seq); HBI_DECL(bi_sort_seq);
HBI_DECL(bi_fold_set); HBI_DECL(bi_reduce_set); HBI_DECL(bi_fold_function); HBI_DECL(bi_fold_seq);
HBI_DECL(bi_fold_function_on_set); HBI_DECL(bi_fold_left); HBI_DECL(bi_fold_right);
HBI_DECL(bi_fold_left_domain); HBI_DECL(bi_fold_right_domain); HBI_DECL(bi_remove_first_match);
HBI_DECL(bi_map_then_fold_set); HBI_DECL(bi_fold_bag); HBI_DECL(bi_quantify); HBI_DECL(bi_map_then_sum_set);
HBI_DECL(bi_choose_unique); HBI_DECL(bi_restrict_domain); HBI_DECL(bi_restrict_values); HBI_DECL(bi_pointwise);
HBI_DECL(bi_tlc_get_and_set); /* builtins_tlc.c */
HBI_DECL(bi_bag_of_all); HBI_DECL(bi_set_to_sort_seq); HBI_DECL(bi_is_sorted); HBI_DECL(bi_is_causal_order);

/* builtins_relation.c: CommunityModules' Relation */
BI(bi_rel_reflexive); BI(bi_rel_irreflexive); BI(bi_rel_symmetric); BI(bi_rel_antisymmetric);
BI(bi_rel_asymmetric); BI(bi_rel_transitive); BI(bi_rel_strict_partial); BI(bi_rel_partial);
BI(bi_rel_strict_total); BI(bi_rel_total); BI(bi_rel_transitive_closure);
BI(bi_rel_reflexive_transitive_closure); BI(bi_rel_connected);
HBI_DECL(bi_rel_reflexive_under); HBI_DECL(bi_rel_irreflexive_under); HBI_DECL(bi_rel_symmetric_under);
HBI_DECL(bi_rel_antisymmetric_under); HBI_DECL(bi_rel_asymmetric_under); HBI_DECL(bi_rel_transitive_under);
HBI_DECL(bi_rel_strict_partial_under); HBI_DECL(bi_rel_partial_under); HBI_DECL(bi_rel_strict_total_under);
HBI_DECL(bi_rel_total_under);

#endif
