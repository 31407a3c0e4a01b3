/* SPDX-License-Identifier: MIT */
/*
 * Journal entries as libsystemd's sd_journal_sendv() sends them to
 * /run/systemd/journal/socket (the native protocol: NAME=value lines; NAME,
 * a 64-bit little-endian length and the bytes for values with newlines),
 * for tests that bind that socket themselves instead of a journald.  The
 * same syntax is the body of an entry in Journal Export Format: the tests
 * that read a journal file (actrack deaths) make theirs of such entries,
 * received or built field by field, with journal_export_to_file().
 * Compiled once, in helpers/journal_native.c.
 */
#ifndef ACTRACK_JOURNAL_NATIVE_H
#define ACTRACK_JOURNAL_NATIVE_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define ENTRY_MAX	(1024 * 1024)
#define JOURNAL_DIR	"/run/systemd/journal"
#define JOURNAL_SOCKET	JOURNAL_DIR "/socket"

struct entry {
	size_t len;
	char buf[ENTRY_MAX];
};

/* Value of field @name (NUL-terminated copy in @out), or NULL. */
const char *field(const struct entry *e, const char *name, char *out,
		  size_t out_len);

/*
 * journal_socket_bind() - the calling process in a mount namespace of its
 * own (the harness forks one per test), a tmpfs on JOURNAL_DIR and the
 * datagram socket sd_journal_sendv() writes to bound there, with an 8 MiB
 * receive buffer (root: SO_RCVBUFFORCE), so that what it and its
 * children send to the journal comes to us.  Needs root.
 * Return: the socket, or -errno.
 */
int journal_socket_bind(void);

/*
 * journal_entry_recv() - one entry from the socket into @e: the datagram,
 * or the memfd it passes (libsystemd's way for an entry over a
 * datagram's size).  Return its length, 0 when nothing came within @ms,
 * or -errno.
 */
ssize_t journal_entry_recv(int sock, struct entry *e, int ms);

/*
 * entry_add() - field @name, the @len bytes of @val, appended to @e as
 * sd_journal_sendv() sends it: NAME=value, or for a value with a newline
 * NAME, its 64-bit little-endian length and the bytes; each ends with a
 * newline.  Return: 0, or -1 (@e full).
 */
int entry_add(struct entry *e, const char *name, const void *val,
	      size_t len);

/* entry_add() of the string @val. */
int entry_add_str(struct entry *e, const char *name, const char *val);

/*
 * One entry of a Journal Export Format file: the fields of @body (the
 * native protocol's body is an export entry's body) after the times and
 * the boot id systemd-journal-remote takes from the export.
 */
struct export_entry {
	uint64_t realtime_us, monotonic_us;
	const char *boot_id;		/* 32 hex digits */
	const struct entry *body;
};

/*
 * journal_export_to_file() - the @nr entries of @list as the journal file
 * @journal (its name ends in .journal): written as Journal Export Format
 * beside it as @journal.export, turned into the file by @remote
 * (systemd-journal-remote; what it says is on stderr if it fails) and
 * removed.  Return: 0 or -1.
 */
int journal_export_to_file(const struct export_entry *list, size_t nr,
			   const char *remote, const char *journal);

/*
 * journal_entry_to_file() - journal_export_to_file() of @e alone, at
 * @realtime_us (monotonic 1 us) with a fixed boot id.
 */
int journal_entry_to_file(const struct entry *e, uint64_t realtime_us,
			  const char *remote, const char *journal);

#endif /* ACTRACK_JOURNAL_NATIVE_H */
