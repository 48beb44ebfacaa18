/*
 * The op table's ids, for code inside the library (and front ends, which may include op_table.def
 * itself): SMX_OPID_<id> is the operation's place in the table, smx_op_info.id.
 */
#ifndef SMX_OPS_OP_TABLE_H
#define SMX_OPS_OP_TABLE_H

/* The expansion helpers every includer of op_table.def shares. */
#define SMX_OPT_CAT_(a, b) a##b
#define SMX_OPT_CAT(a, b) SMX_OPT_CAT_(a, b)
/* SMX_OPT_IF(flag, code...): the code when flag is 1, nothing when it is 0 */
#define SMX_OPT_IF(flag, ...) SMX_OPT_CAT(SMX_OPT_IF_, flag)(__VA_ARGS__)
#define SMX_OPT_IF_0(...)
#define SMX_OPT_IF_1(...) __VA_ARGS__

typedef enum smx_op_id {
#define SMX_DT(a, b, c, d) 0
#define SMX_OP(id, ...) SMX_OPID_##id,
#include "ops/op_table.def"
#undef SMX_OP
#undef SMX_DT
  SMX_OPID_COUNT
} smx_op_id;

#endif
