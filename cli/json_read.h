/* SPDX-License-Identifier: MIT */
/*
 * Reading JSON back (the CLI writes it with json.h): a strict RFC 8259
 * walk that hands each value to a callback with its path, so that a
 * reader of one document picks the members it knows and ignores the
 * rest.  Used by `deaths export` to read the JSON report a journal entry
 * keeps (cli/death_json.c).  The text is not trusted: depth, path length
 * and every escape are bounded, and a malformed document is refused.
 */
#ifndef ACTRACK_CLI_JSON_READ_H
#define ACTRACK_CLI_JSON_READ_H

#include <stddef.h>

enum jr_kind {
	JR_OBJECT,	/* an object begins: @val NULL */
	JR_ARRAY,	/* an array begins: @val NULL */
	JR_STRING,	/* @val: the decoded UTF-8 bytes (may hold NULs) */
	JR_NUMBER,	/* @val: the number's text */
	JR_TRUE,
	JR_FALSE,
	JR_NULL,
};

/*
 * Called for every value, a container before its members.  @path: the
 * keys from the root joined by ".", an array's element adding "[]"
 * ("process.modules[].path"; "" for the root).  Return 0 to go on, or a
 * -errno that ends the walk and is returned by json_read().
 */
typedef int (*jr_fn)(void *arg, const char *path, enum jr_kind kind,
		     const char *val, size_t len);

/*
 * json_read() - walk the one JSON value of @s (@len bytes; white space
 * around it allowed, nothing else).
 * Return: 0, -EBADMSG (not JSON, too deep, a path over 255 bytes),
 * -ENOMEM, or the callback's -errno.
 */
int json_read(const char *s, size_t len, jr_fn fn, void *arg);

#endif /* ACTRACK_CLI_JSON_READ_H */
