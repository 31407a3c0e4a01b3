/* SPDX-License-Identifier: MIT */
/*
 * The hand-built arena of the cli_* golden tests: fixed pids, times and
 * addresses, so that the CLI's whole output can be compared as text.
 * "Now" for the CLI is GOLDEN_NOW (--now), 60 s after the arena's creation.
 * Built by helpers/cli_golden.c.
 */
#ifndef ACTRACK_CLI_GOLDEN_H
#define ACTRACK_CLI_GOLDEN_H

#include "snapshot_helpers.h"

#define GOLDEN_T0	BUILD_CREATE_MONO		/* 1000 s */
#define GOLDEN_NOW	(GOLDEN_T0 + 60000000000ULL)	/* 1060 s */
#define GOLDEN_AT(ms)	(GOLDEN_T0 + (uint64_t)(ms) * 1000000ULL)

/* An activity started @ms after GOLDEN_T0. */
struct actrack_activity golden_act(uint8_t type, uint64_t object, uint64_t info,
				   uint64_t ms, uint64_t origin);

/* Return 0 or -errno; @b is left allocated on success. */
int golden_build(struct build *b);

#endif /* ACTRACK_CLI_GOLDEN_H */
