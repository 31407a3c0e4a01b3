/* SPDX-License-Identifier: MIT */
/*
 * docs/json-schema.json as the NUL-terminated string actrack_test_schema:
 * the schema of the tree the test was built from, wherever the test runs
 * (helpers/json_schema.c embeds it).
 */
#ifndef ACTRACK_TEST_JSON_SCHEMA_H
#define ACTRACK_TEST_JSON_SCHEMA_H

extern const char actrack_test_schema[] __attribute__((visibility("hidden")));

#endif /* ACTRACK_TEST_JSON_SCHEMA_H */
