// SPDX-License-Identifier: MIT
/*
 * docs/json-schema.json embedded (.incbin) as actrack_test_schema
 * (json_schema.h).  ACTRACK_SCHEMA_FILE is its path as the assembler sees
 * it, made absolute by the Makefile, which also makes this object depend
 * on the file.
 */
#include "json_schema.h"

#ifndef ACTRACK_SCHEMA_FILE
#error "ACTRACK_SCHEMA_FILE: the path of docs/json-schema.json (Makefile)"
#endif

__asm__(".pushsection .rodata\n"
	".globl actrack_test_schema\n"
	".hidden actrack_test_schema\n"
	"actrack_test_schema:\n"
	".incbin \"" ACTRACK_SCHEMA_FILE "\"\n"
	".byte 0\n"
	".popsection\n");
