/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST tracepoint the benchmark records: the same information as
 * one actrack push (activity type, object, origin pc).
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER actrack_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./tp.h"

#if !defined(ACTRACK_BENCH_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define ACTRACK_BENCH_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
	actrack_bench,
	push,
	TP_ARGS(unsigned int, type, unsigned long, object, unsigned long,
		origin),
	TP_FIELDS(
		ctf_integer(unsigned int, type, type)
		ctf_integer_hex(unsigned long, object, object)
		ctf_integer_hex(unsigned long, origin, origin)
	)
)

#endif /* ACTRACK_BENCH_TP_H */

#include <lttng/tracepoint-event.h>
