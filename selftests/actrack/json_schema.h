/* SPDX-License-Identifier: MIT */
/*
 * docs/json-schema.json, embedded in the test binary that includes this
 * (once per binary) as the NUL-terminated string actrack_test_schema: the
 * schema of the tree the test was built from, wherever the test runs.
 * ACTRACK_SCHEMA_FILE is the path as the assembler sees it (relative to
 * the directory make runs in), set by the Makefile for out-of-tree builds.
 */
#ifndef ACTRACK_TEST_JSON_SCHEMA_H
#define ACTRACK_TEST_JSON_SCHEMA_H

#ifndef ACTRACK_SCHEMA_FILE
#define ACTRACK_SCHEMA_FILE "docs/json-schema.json"
#endif

__asm__(".pushsection .rodata\n"
	".globl actrack_test_schema\n"
	".hidden actrack_test_schema\n"
	"actrack_test_schema:\n"
	".incbin \"" ACTRACK_SCHEMA_FILE "\"\n"
	".byte 0\n"
	".popsection\n");
extern const char actrack_test_schema[] __attribute__((visibility("hidden")));

#endif /* ACTRACK_TEST_JSON_SCHEMA_H */
