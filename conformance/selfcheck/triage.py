"""Hand verdicts on surviving mutants: "equivalent" (with the reason) or "missed" (a bug the suite lets through).

Keys are mutant ids from mutate.py; the campaign attaches these verdicts to its survivors, next to the
differential run's evidence. Shared reasons are named once below.
"""

from __future__ import annotations

# need = blocks_for(num_computed + n) - num_blocks is never negative: a running sequence holds exactly
# blocks_for(num_computed) blocks and n >= 0, so the "need <= 0" shortcut only skips a no-op.
NEED_NEVER_NEGATIVE = "need is never < 0 (a running seq holds blocks_for(num_computed)), so need == 0 adds 0 blocks"
# The call protocol (docs/api.md) always calls schedule() before update(), and never update() twice in a row.
PROTOCOL_ORDER = "the protocol calls schedule() before every update(), so the initial/reset value is never read"
# Phase 1 only reaches budget == 0 at its last running sequence: every running sequence was scheduled in the
# previous step (so len(running) <= budget) and only the last one can still need more than 1 token.
BUDGET_ENDS_AT_LAST = ("phase 1 reaches budget 0 only at the last running seq (all but the last need 1 token and "
                       "len(running) <= budget), so the loop ends there anyway")
# A partial prefill chunk takes the whole remaining budget, so it is the last entry of the batch.
PARTIAL_IS_LAST = "a partial chunk uses the rest of the budget, so it is the batch's last entry: nothing follows it"
# sample_fn may depend only on seq_id and output (docs/api.md), so fields it does not read may be stale during the call.
SAMPLE_READS_OUTPUT_ONLY = "sample_fn sees only seq_id and output (docs/api.md); num_computed is synced right after"
ALIAS_READ_ONLY = "returns the live list instead of a copy; graders only read the queues, so nothing observes it"

SKIP_IS_LAST = ("a self-preempted seq was running[-1], so after skipping it i == len(running): `break` ends the "
                "loop where `continue` would")
WAITING_COMPUTED_ZERO = "a waiting seq always has num_computed == 0 and num_blocks == 0, so `+` and `-` agree"
NEED_UNCHANGED = "preempting another seq does not change this seq's need, so recomputing it is redundant"
R0_ADMITTED_FIRST = ("heap keys only order entries; the first arrival is admitted at its first schedule(), so a "
                     "shared first key never meets another entry in the heap")
UNUSED_VALUE = "the value is never read (an event amount, a log, a type alias, an always-true assert)"
INIT_OVERWRITTEN = "add() overwrites the slot's initial value with the same value it would have"
FALSY_NONE = "falling off the end returns None, which the caller treats like False"
ALWAYS_GROW = "growing the slot table on every add wastes memory but changes no observation"
TYPE_MISS = ("docs/api.md fixes the container types; the suite reads the queue without checking that it is the type "
             "docs/api.md names")
GENERATOR_MISS = ("`waiting` becomes a one-shot generator: len(), indexing and a second read fail, yet the suite "
                  "passes it; docs/api.md says `waiting: collections.deque`")

TRIAGE: dict[str, tuple[str, str]] = {
    "class_per_phase.py:56:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "class_per_phase.py:56:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "class_per_phase.py:56:19:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "class_per_phase.py:99:35:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "class_per_phase.py:99:49:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "class_per_phase.py:150:16:loopctl_break": ("equivalent", PARTIAL_IS_LAST),
    "class_per_phase.py:177:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "class_per_phase.py:177:29:const_dec": ("equivalent", PROTOCOL_ORDER),
    "class_per_phase.py:177:29:const_inc": ("equivalent", PROTOCOL_ORDER),
    "class_per_phase.py:195:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "class_per_phase.py:195:29:const_dec": ("equivalent", PROTOCOL_ORDER),
    "class_per_phase.py:195:29:const_inc": ("equivalent", PROTOCOL_ORDER),
    "columnar.py:60:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "columnar.py:64:15:unwrap": ("equivalent", ALIAS_READ_ONLY),
    "columnar.py:91:38:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "columnar.py:91:47:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "columnar.py:96:18:cmp_0GtE": ("equivalent", NEED_NEVER_NEGATIVE),
    "columnar.py:96:25:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "columnar.py:107:16:del_stmt": ("equivalent", NEED_UNCHANGED),
    "columnar.py:109:16:loopctl_break": ("equivalent", SKIP_IS_LAST),
    "columnar.py:110:15:cmp_0GtE": ("equivalent", NEED_NEVER_NEGATIVE),
    "columnar.py:110:22:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "columnar.py:117:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "columnar.py:119:15:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "columnar.py:138:16:loopctl_break": ("equivalent", PARTIAL_IS_LAST),
    "columnar.py:139:12:del_stmt": ("equivalent", SAMPLE_READS_OUTPUT_ONLY),
    "columnar.py:148:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "dict_of_deques.py:60:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "dict_of_deques.py:68:15:unwrap": ("missed", TYPE_MISS),
    "dict_of_deques.py:72:15:unwrap": ("missed", TYPE_MISS),
    "dict_of_deques.py:94:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "dict_of_deques.py:94:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "dict_of_deques.py:94:20:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "dict_of_deques.py:100:8:del_stmt": ("equivalent", FALSY_NONE),
    "dict_of_deques.py:108:35:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "dict_of_deques.py:108:44:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "dict_of_deques.py:125:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "dict_of_deques.py:139:16:loopctl_break": ("equivalent", PARTIAL_IS_LAST),
    "dict_of_deques.py:146:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "event_log.py:41:0:del_stmt": ("equivalent", UNUSED_VALUE),
    "event_log.py:63:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "event_log.py:68:8:del_stmt": ("equivalent", UNUSED_VALUE),
    "event_log.py:102:40:const_dec": ("equivalent", UNUSED_VALUE),
    "event_log.py:102:40:const_inc": ("equivalent", UNUSED_VALUE),
    "event_log.py:107:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "event_log.py:107:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "event_log.py:107:19:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "event_log.py:114:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "event_log.py:117:40:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "event_log.py:117:49:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "event_log.py:123:55:const_dec": ("equivalent", UNUSED_VALUE),
    "event_log.py:123:55:const_inc": ("equivalent", UNUSED_VALUE),
    "event_log.py:128:16:loopctl_break": ("equivalent", SKIP_IS_LAST),
    "event_log.py:135:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "event_log.py:146:25:unwrap": ("equivalent", UNUSED_VALUE),
    "event_log.py:153:51:const_dec": ("equivalent", UNUSED_VALUE),
    "event_log.py:153:51:const_inc": ("equivalent", UNUSED_VALUE),
    "event_log.py:155:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "functional_copy.py:71:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "functional_copy.py:75:15:unwrap": ("missed", TYPE_MISS),
    "functional_copy.py:79:15:unwrap": ("missed", TYPE_MISS),
    "functional_copy.py:83:15:unwrap": ("missed", TYPE_MISS),
    "functional_copy.py:96:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "functional_copy.py:96:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "functional_copy.py:96:19:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "functional_copy.py:116:37:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "functional_copy.py:116:46:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "functional_copy.py:127:16:loopctl_break": ("equivalent", SKIP_IS_LAST),
    "functional_copy.py:134:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "functional_copy.py:160:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "functional_copy.py:161:15:unwrap": ("missed", TYPE_MISS),
    "heap_queue.py:55:26:const_dec": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:55:26:const_inc": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:56:27:const_dec": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:56:27:const_inc": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:61:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "heap_queue.py:65:15:unwrap": ("missed", GENERATOR_MISS),
    "heap_queue.py:69:27:const_inc": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:73:27:const_inc": ("equivalent", R0_ADMITTED_FIRST),
    "heap_queue.py:80:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "heap_queue.py:80:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "heap_queue.py:80:19:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "heap_queue.py:101:40:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "heap_queue.py:101:49:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "heap_queue.py:112:16:loopctl_break": ("equivalent", SKIP_IS_LAST),
    "heap_queue.py:118:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "heap_queue.py:134:16:loopctl_break": ("equivalent", PARTIAL_IS_LAST),
    "heap_queue.py:144:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "slot_table.py:58:15:const_dec": ("equivalent", ALWAYS_GROW),
    "slot_table.py:58:15:const_inc": ("equivalent", ALWAYS_GROW),
    "slot_table.py:60:26:const_dec": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:60:26:const_inc": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:61:22:const_dec": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:61:22:const_inc": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:69:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "slot_table.py:70:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "slot_table.py:74:15:unwrap": ("missed", GENERATOR_MISS),
    "slot_table.py:86:8:del_stmt": ("equivalent", UNUSED_VALUE),
    "slot_table.py:102:8:del_stmt": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:103:8:del_stmt": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:104:8:del_stmt": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:120:8:del_stmt": ("equivalent", NEED_NEVER_NEGATIVE),
    "slot_table.py:120:11:cmp_0Lt": ("equivalent", NEED_NEVER_NEGATIVE),
    "slot_table.py:120:19:const_dec": ("equivalent", NEED_NEVER_NEGATIVE),
    "slot_table.py:137:37:cmp_0GtE": ("equivalent", BUDGET_ENDS_AT_LAST),
    "slot_table.py:137:46:const_dec": ("equivalent", BUDGET_ENDS_AT_LAST),
    "slot_table.py:158:20:binop_Add": ("equivalent", WAITING_COMPUTED_ZERO),
    "slot_table.py:178:16:loopctl_break": ("equivalent", PARTIAL_IS_LAST),
    "slot_table.py:179:12:del_stmt": ("equivalent", SAMPLE_READS_OUTPUT_ONLY),
    "slot_table.py:188:8:del_stmt": ("equivalent", PROTOCOL_ORDER),
    "slot_table.py:92:31:const_dec": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:92:31:const_inc": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:93:27:const_dec": ("equivalent", INIT_OVERWRITTEN),
    "slot_table.py:93:27:const_inc": ("equivalent", INIT_OVERWRITTEN),
}
