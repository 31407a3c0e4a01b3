// SPDX-License-Identifier: MIT
/*
 * The last boot's story: arenas in reserved RAM (the module's persist=
 * region, kmod/persist.c) outlive a kernel panic and are read back, after
 * the reset, by the next boot of the same machine.
 *
 * One VM, three boots, two ways to die: `scripts/vmtest --persist` boots
 * with reserve_mem=...:actrack_vmtest (6.12 on) or memmap=16M$0x20000000
 * (5.10, 6.1, or any kernel with --persist=memmap) and lets a panic or
 * its emulated watchdog (i6300esb) reset the VM (QEMU keeps its RAM)
 * instead of ending it.  Each boot reloads the module with
 * persist=actrack_vmtest or persist=16M@0x20000000.  When there is no
 * previous boot's image (the first boot), previous_boot starts a victim
 * that pushes known values into its arena, then crashes the kernel (sysrq
 * c).  In the next boot it must find that victim with those exact values,
 * through the library, `actrack ps --previous-boot` and `actrack dump
 * --previous-boot`, and nobody but root may read it; monitor_boot_entry
 * checks the journal entry the monitor writes about it; in a memmap= run,
 * corrupt_previous_boot scribbles on the region through /dev/mem (not
 * System RAM, and unclaimed while the module is loaded without persist=)
 * and rereads it; then hard_hang starts the same victim with another
 * value and hangs the machine hard (every CPU spinning with interrupts
 * off: the test fixture selftests/actrack/lockup), no panic, nothing
 * flushed, until the watchdog resets it.  In the third boot the same
 * checker must find the hang's victim.  The victim's value says which way
 * its boot died.  Anything else: a SKIP that says why.  In any run,
 * persist= naming no region, or a range that cannot be one, is refused
 * with an exact errno.
 *
 * The parts it includes (vm_persist.h lists them) hold its helpers and
 * checks by concept; here are its cases, in the order of the story.
 */
#include "vm_persist.h"
#include "vm_persist_death.h"
#include "vm_persist_image.h"
#include "vm_persist_monitor.h"
#include "vm_persist_corrupt.h"

FIXTURE(persist) {
	int unused;
};

FIXTURE_SETUP(persist)
{
}

FIXTURE_TEARDOWN(persist)
{
}

/*
 * Without its region the parameter is refused, with the errno that says
 * why: no such region (6.12+), or no reserve_mem= at all (before).  The
 * module is left loaded without it.
 */
TEST_F_TIMEOUT(persist, refused_without_region, 120)
{
	int want = kernel_has_reserve_mem() ? -ENOENT : -EINVAL;

	VM_REQUIRE_MODULE();
	EXPECT_EQ(want, reload("persist=actrack_no_such_region"));
	ASSERT_EQ(0, reload(""));
}

/*
 * A range that cannot be a region, each refused with its errno and its
 * dmesg line: malformed, empty, unaligned, wrapping past the physical
 * address space (EINVAL), the kernel's own RAM (EADDRNOTAVAIL).
 */
TEST_F_TIMEOUT(persist, hostile_range, 120)
{
	static const struct {
		const char *param;
		int err;
		const char *said;
	} cases[] = {
		{ "persist=16M@", -EINVAL, "neither a label" },
		{ "persist=16Q@0x20000000", -EINVAL, "neither a label" },
		{ "persist=@0x20000000", -EINVAL, "neither a label" },
		{ "persist=16M@0x20000000x", -EINVAL, "neither a label" },
		{ "persist=0@0x20000000", -EINVAL, "must be non-zero" },
		{ "persist=16M@0x20000800", -EINVAL, "must be non-zero" },
		{ "persist=16385@0x20000000", -EINVAL, "must be non-zero" },
		{ "persist=16M@0xfffffffffffff000", -EINVAL,
		  "overflows the physical address space" },
		{ "persist=4G@0xfffffffff0000000", -EINVAL,
		  "overflows the physical address space" },
		/* The kernel's own memory: 64 MiB on is RAM under QEMU. */
		{ "persist=16M@0x4000000", -EADDRNOTAVAIL,
		  "is (partly) System RAM" },
	};
	bool said;

	VM_REQUIRE_MODULE();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].err, reload_said(cases[i].param,
						    cases[i].said, &said))
			TH_LOG("%s", cases[i].param);
		EXPECT_TRUE(said) TH_LOG("%s: no '%s' in dmesg",
					 cases[i].param, cases[i].said);
	}
	ASSERT_EQ(0, reload(""));
}

/* A range another driver holds (QEMU's I/O APIC): EBUSY. */
TEST_F_TIMEOUT(persist, range_held_by_a_driver, 120)
{
	bool said;

	VM_REQUIRE_MODULE();
	if (!iomem_has("fec00000-fec003ff : IOAPIC 0"))
		SKIP(return, "no 'fec00000-fec003ff : IOAPIC 0' in /proc/iomem "
		     "(a kernel without X86_IO_APIC, or not QEMU's PC "
		     "machine)");
	EXPECT_EQ(-EBUSY, reload_said("persist=4M@0xfec00000",
				      "held by another driver", &said));
	EXPECT_TRUE(said);
	ASSERT_EQ(0, reload(""));
}

/*
 * The memmap= region within one boot, where nothing crashes (a kernel
 * without sysrq, or one run of many): claimed at load (/proc/iomem), an
 * arena carved from it and mapped, released at unload.
 */
TEST_F_TIMEOUT(persist, memmap_region_live, 240)
{
	const char *param = persist_param();
	bool said;
	pid_t pid;
	int status;

	VM_REQUIRE_MODULE();
	if (!param || strcmp(param, REGION_ARG))
		SKIP(return, "needs the " MEMMAP_ARG " region on the kernel "
		     "command line (scripts/vmtest --persist=memmap)");
	ASSERT_EQ(0, reload_said(param, "persist: region 16M@0x20000000, "
				 "16777216 bytes, half ", &said));
	EXPECT_TRUE(said);
	EXPECT_TRUE(iomem_has("20000000-20ffffff : actrack persist"));

	start_victim(_metadata, VICTIM_VALUE, &pid);
	if (ACTRACK_TEST_FAILED(_metadata))
		return;
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	ASSERT_EQ(0, reload(""));
	EXPECT_FALSE(iomem_has(": actrack persist"));
}

TEST_F_TIMEOUT(persist, previous_boot, 240)
{
	const char *param = persist_param();
	uint64_t value;
	int ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a two-boot run: neither reserve_mem=SIZE:"
		     "ALIGN:" LABEL " (6.12+) nor " MEMMAP_ARG " on the "
		     "kernel command line (scripts/vmtest --persist)");
	if (access("/proc/sysrq-trigger", W_OK))
		SKIP(return, "no /proc/sysrq-trigger (CONFIG_MAGIC_SYSRQ): "
		     "the kernel cannot be crashed on purpose");
	TH_LOG("region: %s", param);
	ASSERT_EQ(0, reload(param));
	ret = select_previous(0);
	if (ret == -ENODATA) {
		first_boot(_metadata);
		return;
	}
	ASSERT_EQ(0, ret);
	second_boot(_metadata, &value);
	if (!ACTRACK_TEST_FAILED(_metadata))
		checked_write(value);
	/* As the tests after it expect: without persist=. */
	ASSERT_EQ(0, reload(""));
}

/*
 * The service at the second boot: `actrack monitor --journal` writes one
 * entry about the image (the boot id `ps --previous-boot` reads, its
 * processes, the victim with what it was doing); started again in the
 * same boot, none.
 */
TEST_F_TIMEOUT(persist, monitor_boot_entry, 600)
{
	const char *param = persist_param();
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct boot_monitor m;
	char boot[33], mark[128], *err;
	struct entry *e;
	uint8_t now[16];
	int sock, ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a two-boot run: no persist= region on the "
		     "kernel command line (scripts/vmtest --persist)");
	ASSERT_EQ(0, reload(param));
	ret = select_previous(0);
	if (ret == -ENODATA)
		SKIP(return, "the first boot (no image yet): its crash comes "
		     "in persist.previous_boot");
	ASSERT_EQ(0, ret);

	/* What ps --previous-boot reads: the walk the monitor uses. */
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	p = find_victim(s);
	ASSERT_NE(NULL, p);
	for (int i = 0; i < 16; i++)
		snprintf(boot + 2 * i, 3, "%02x", s->header.boot_id[i]);
	ASSERT_EQ(0, actrack_boot_id(now));
	EXPECT_NE(0, memcmp(now, s->header.boot_id, sizeof(now)));

	sock = journal_socket_bind();
	ASSERT_LE(0, sock) TH_LOG("journal socket: %s", strerror(-sock));
	e = calloc(1, sizeof(*e));
	ASSERT_NE(NULL, e);
	/* A monitor of another test of this boot may have logged it. */
	snprintf(mark, sizeof(mark), MARK_DIR "/previous-boot.%s", boot);
	unlink(mark);

	ASSERT_EQ(0, boot_monitor_start(&m));
	EXPECT_EQ(1, boot_entries(sock, e));
	err = boot_monitor_stop(&m);
	EXPECT_STREQ("", err ? err : "?");
	free(err);
	check_boot_entry(_metadata, e, s, p, boot);
	EXPECT_EQ(0, access(mark, F_OK));

	/* Restarted in the same boot: the image was logged. */
	ASSERT_EQ(0, boot_monitor_start(&m));
	EXPECT_EQ(0, boot_entries(sock, e));
	err = boot_monitor_stop(&m);
	EXPECT_STREQ("", err ? err : "?");
	free(err);

	free(e);
	close(sock);
	actrack_snapshot_free(s);
	ASSERT_EQ(0, reload(""));
}

/*
 * Second boot of a memmap= run: the previous boot's image, scribbled on
 * between loads through /dev/mem.  Its arena's magic: the image is still
 * there but the arena is refused as such (EBADMSG, "bad magic", status
 * 1), by the library and the CLI.  A slot of its table: the checksum
 * fails, dmesg says so and no image is kept (ENODATA).  Put back, both
 * read as before.
 */
TEST_F_TIMEOUT(persist, corrupt_previous_boot, 240)
{
	const char *param = persist_param();
	static const char garbage[8] = "GARBAGE!";
	char magic[8];
	struct actrack_snapshot *s;
	uint64_t half, arena;
	uint32_t uid, bad_uid = 4242;
	bool said;
	int mem;

	VM_REQUIRE_MODULE();
	if (!param || strcmp(param, REGION_ARG))
		SKIP(return, "needs the " MEMMAP_ARG " region (scripts/vmtest "
		     "--persist on 6.1, --persist=memmap on any kernel): "
		     "/dev/mem cannot write System RAM");
	mem = open("/dev/mem", O_RDWR | O_SYNC | O_CLOEXEC);
	if (mem < 0)
		SKIP(return, "no /dev/mem (CONFIG_DEVMEM): %s", strerror(errno));
	ASSERT_EQ(0, reload(param));
	if (select_previous(0) == -ENODATA) {
		close(mem);
		SKIP(return, "no previous boot's image in the region (the "
		     "first boot, or previous_boot did not run)");
	}
	/* Claimed by the module: closed to /dev/mem. */
	EXPECT_EQ(-1, pread(mem, magic, sizeof(magic), (off_t)REGION_START));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, reload(""));

	half = previous_half(mem);
	ASSERT_NE(0, half);
	ASSERT_EQ(sizeof(uid), pread(mem, &uid, sizeof(uid),
				     (off_t)(half + SLOT0_UID)));
	ASSERT_EQ(0, uid);
	arena = half + 4096;	/* slot 0's arena */
	ASSERT_EQ(sizeof(magic), pread(mem, magic, sizeof(magic),
				       (off_t)arena));

	/* The arena's magic: the image stays, its arena is refused. */
	ASSERT_EQ(sizeof(garbage), pwrite(mem, garbage, sizeof(garbage),
					  (off_t)arena));
	ASSERT_EQ(0, reload(param));
	EXPECT_EQ(0, select_previous(0));
	EXPECT_EQ(-EBADMSG, actrack_snapshot_take(NULL,
						  ACTRACK_SNAP_PREVIOUS_BOOT,
						  &s));
	check_cli_refused(_metadata, 1, ACTRACK_DEVICE_PATH
			  " (previous boot): not an actrack arena (bad magic)");
	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(sizeof(magic), pwrite(mem, magic, sizeof(magic),
					(off_t)arena));

	/* Its first records: read, and the damage said. */
	scribble_records(_metadata, mem, arena, param);

	/* Its slot table: the checksum fails, no image is kept. */
	ASSERT_EQ(sizeof(bad_uid), pwrite(mem, &bad_uid, sizeof(bad_uid),
					  (off_t)(half + SLOT0_UID)));
	EXPECT_EQ(0, reload_said(param, "header or slot table fails its "
				 "checksum: its image is not kept", &said));
	EXPECT_TRUE(said);
	EXPECT_EQ(-ENODATA, select_previous(0));
	check_cli_refused(_metadata, 1, "no image of a previous boot");
	ASSERT_EQ(0, reload(""));

	/* Put back: the image is whole again, and read as before. */
	ASSERT_EQ(sizeof(uid), pwrite(mem, &uid, sizeof(uid),
				      (off_t)(half + SLOT0_UID)));
	ASSERT_EQ(0, reload(param));
	EXPECT_EQ(0, select_previous(0));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_FALSE(s->corrupt);
	EXPECT_NE(NULL, find_victim(s));
	actrack_snapshot_free(s);
	close(mem);
	ASSERT_EQ(0, reload(""));
}

/*
 * The second way to die, after previous_boot checked the panic's image:
 * a victim again (another value), the watchdog armed, and the machine
 * hung with interrupts off on every CPU.  No panic, no reboot by the
 * kernel: only the watchdog's reset, and the next boot's previous_boot
 * checks what the hang left with the same checker; here then, that it
 * did so.
 */
TEST_F_TIMEOUT(persist, hard_hang, 240)
{
	const char *param = persist_param();
	uint64_t checked;
	pid_t pid;
	int ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a persist run: no persist= region on the "
		     "kernel command line (scripts/vmtest --persist)");
	checked = checked_read();
	if (checked == VICTIM_VALUE_HANG)
		return;	/* the hang's image, checked by previous_boot */
	if (checked != VICTIM_VALUE)
		SKIP(return, "previous_boot checked no panic's image in this "
		     "boot: no hang on top of it");
	ret = watchdog_ready();
	if (ret)
		SKIP(return, "no watchdog to reset a hung VM (%s): vmtest "
		     "--persist gives qemu an i6300esb and packs this "
		     "kernel's watchdog.ko and i6300esb.ko", strerror(-ret));
	if (access(LOCKUP_KO, R_OK))
		SKIP(return, "no %s: the test fixture is built by "
		     "scripts/vmtest for --persist", LOCKUP_KO);
	ASSERT_EQ(0, reload(param));
	start_victim(_metadata, VICTIM_VALUE_HANG, &pid);
	if (ACTRACK_TEST_FAILED(_metadata))
		return;
	hang_machine(_metadata, pid);
}

TEST_HARNESS_MAIN
