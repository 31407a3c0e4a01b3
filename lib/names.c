// SPDX-License-Identifier: MIT
/*
 * Printable names of the ABI's enumerations.  Each is a single token (no
 * spaces) so that tools can grep and split the analyzer's output; values the
 * reader does not know (a newer writer) get "unknown" rather than NULL, so a
 * caller can always print the result.
 */
#include "internal.h"

ACTRACK_API const char *actrack_version(void)
{
	return ACTRACK_VERSION;
}

ACTRACK_API const char *actrack_activity_name(uint8_t type)
{
	switch (type) {
	case ACTRACK_ACT_TASK_RUN:
		return "task-run";
	case ACTRACK_ACT_LOCK_ACQUIRE:
		return "lock-acquire";
	case ACTRACK_ACT_LOCK_HELD:
		return "lock-held";
	case ACTRACK_ACT_EVENT_WAIT:
		return "event-wait";
	case ACTRACK_ACT_THREAD_JOIN:
		return "thread-join";
	case ACTRACK_ACT_PROCESS_WAIT:
		return "process-wait";
	case ACTRACK_ACT_IO_WAIT:
		return "io-wait";
	}
	/* Generic activities carry their action in the low nibble. */
	if ((type & ACTRACK_ACT_CATEGORY_MASK) == ACTRACK_ACT_GENERIC)
		return "generic";
	return "unknown";
}

ACTRACK_API const char *actrack_phase_name(uint32_t phase)
{
	switch (phase) {
	case ACTRACK_PHASE_UNKNOWN:
		return "unknown";
	case ACTRACK_PHASE_LAUNCHED:
		return "launched";
	case ACTRACK_PHASE_LAUNCH_FAILED:
		return "launch-failed";
	case ACTRACK_PHASE_EXITED_CLEANLY:
		return "exited-cleanly";
	case ACTRACK_PHASE_EXITED_WITH_CODE:
		return "exited-with-code";
	case ACTRACK_PHASE_SHUTDOWN_STARTED:
		return "shutdown-started";
	case ACTRACK_PHASE_MAIN_LOOP_STARTED:
		return "main-loop-started";
	}
	return "unknown";
}

ACTRACK_API const char *actrack_value_type_name(uint8_t type)
{
	switch (type) {
	case ACTRACK_VALUE_RAW:
		return "raw";
	case ACTRACK_VALUE_STRING:
		return "string";
	case ACTRACK_VALUE_BOOL:
		return "bool";
	case ACTRACK_VALUE_CHAR:
		return "char";
	case ACTRACK_VALUE_SIGNED:
		return "signed";
	case ACTRACK_VALUE_UNSIGNED:
		return "unsigned";
	case ACTRACK_VALUE_RAW_REF:
		return "raw-ref";
	case ACTRACK_VALUE_STRING_REF:
		return "string-ref";
	}
	return "unknown";
}
