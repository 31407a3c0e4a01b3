// SPDX-License-Identifier: MIT
/*
 * The previous boot's image as a whole (cli/previous_boot.h), and the
 * journal entry that says at boot what the machine was running when it
 * died: every process of the image with what each thread was doing (its
 * innermost activity, as dump names it) and, for a hung thread, the
 * verdict `hangs --previous-boot` gives it (cli/hangs.h).  The walk is the
 * library's snapshot of ps, dump and hangs --previous-boot; nothing here
 * reads an arena itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cli.h"
#include "hangs.h"
#include "journal.h"
#include "json.h"
#include "previous_boot.h"
#include "render.h"

/* Processes the MESSAGE names; the report (ACTRACK_REPORT) has them all. */
#define MESSAGE_MAX_PROCESSES	32

static int cmp_uid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The uids the image holds, as the module lists them (ABI 1.9, root):
 * their number and *@out to free, or -errno (ENOTTY: an older module).
 */
static int image_uids(uint32_t **out)
{
	struct actrack_previous_uids q = { 0 };
	uint32_t *uids = NULL, room;
	int fd, ret;

	*out = NULL;
	fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* How many, then room for them: the image is fixed at load. */
	ret = ioctl(fd, ACTRACK_IOC_PREVIOUS_UIDS, &q) ? -errno : 0;
	room = q.nr;
	if (!ret && room) {
		uids = calloc(room, sizeof(*uids));
		q.uids = (uintptr_t)uids;
		ret = !uids ? -ENOMEM :
		      ioctl(fd, ACTRACK_IOC_PREVIOUS_UIDS, &q) ? -errno :
		      q.nr > room ? -EAGAIN : 0;
	}
	close(fd);
	if (ret) {
		free(uids);
		return ret;
	}
	*out = uids;
	return (int)q.nr;
}

/* hangs --all-users' uids and the user database's, sorted, each once. */
static uint32_t candidate_uids(uint32_t **out)
{
	uint32_t n = hangs_list_uids(out), cap = n, k = 0;
	struct passwd *pw;

	if (!*out)
		return 0;
	setpwent();
	while ((pw = getpwent())) {
		if (n == cap) {
			uint32_t *m = realloc(*out, (2 * cap + 16) *
						    sizeof(**out));

			if (!m)
				break;
			*out = m;
			cap = 2 * cap + 16;
		}
		(*out)[n++] = (uint32_t)pw->pw_uid;
	}
	endpwent();
	qsort(*out, n, sizeof(**out), cmp_uid);
	for (uint32_t i = 0; i < n; i++)
		if (!k || (*out)[i] != (*out)[k - 1])
			(*out)[k++] = (*out)[i];
	return k;
}

/* Arena @s of @uid, kept in @img.  Return 0 or -ENOMEM. */
static int add_arena(struct boot_image *img, uint32_t uid,
		     struct actrack_snapshot *s)
{
	struct actrack_snapshot **snaps;
	uint32_t *uids;

	snaps = realloc(img->snaps, (img->nr_arenas + 1) * sizeof(*snaps));
	if (snaps)
		img->snaps = snaps;
	uids = realloc(img->uids, (img->nr_arenas + 1) * sizeof(*uids));
	if (uids)
		img->uids = uids;
	if (!snaps || !uids) {
		actrack_snapshot_free(s);
		return -ENOMEM;
	}
	if (!img->nr_arenas) {
		memcpy(img->boot_id, s->header.boot_id, sizeof(img->boot_id));
		for (int i = 0; i < 16; i++)
			snprintf(img->boot_hex + 2 * i, 3, "%02x",
				 img->boot_id[i]);
	}
	img->snaps[img->nr_arenas] = s;
	img->uids[img->nr_arenas++] = uid;
	img->nr_corrupt += s->corrupt;
	img->nr_torn += s->nr_torn;
	img->nr_lost += s->header.lost_records;
	img->nr_processes += s->nr_processes;
	return 0;
}

int boot_image_read(struct boot_image *img)
{
	struct actrack_snapshot *s;
	uint32_t *uids = NULL, n;
	int ret = image_uids(&uids);

	/* A module before ABI 1.9 lists none: probe every uid we know. */
	if (ret < 0) {
		n = candidate_uids(&uids);
		ret = uids ? 0 : -ENOMEM;
	} else {
		n = (uint32_t)ret;
		ret = 0;
	}

	memset(img, 0, sizeof(*img));
	for (uint32_t i = 0; !ret && i < n; i++) {
		ret = actrack_snapshot_take_uid(uids[i],
						ACTRACK_SNAP_PREVIOUS_BOOT, &s);
		if (!ret) {
			ret = add_arena(img, uids[i], s);
		} else if (ret == -ENOENT) {
			ret = 0;	/* none of that uid in the image */
		} else if (ret == -EBADMSG || ret == -EUCLEAN ||
			   ret == -EPROTONOSUPPORT) {
			img->nr_unreadable++;
			ret = 0;
		}
	}
	free(uids);
	if (!ret && !img->nr_arenas)
		ret = img->nr_unreadable ? -EUCLEAN : -ENODATA;
	if (ret)
		boot_image_free(img);
	return ret;
}

void boot_image_free(struct boot_image *img)
{
	for (uint32_t i = 0; i < img->nr_arenas; i++)
		actrack_snapshot_free(img->snaps[i]);
	free(img->snaps);
	free(img->uids);
	img->snaps = NULL;
	img->uids = NULL;
	img->nr_arenas = 0;
}

/* A hung thread of the image, as hangs_image() judged it. */
struct hung {
	const struct actrack_snap_process *p;
	uint32_t tid;
	char verdict[16];
	char *why;
};

struct hung_list {
	struct hung *v;
	size_t nr;
};

static int add_hung(const struct actrack_snap_process *p, uint32_t tid,
		    const char *verdict, const char *why, void *arg)
{
	struct hung_list *l = arg;
	struct hung *v = realloc(l->v, (l->nr + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->v = v;
	v += l->nr;
	v->p = p;
	v->tid = tid;
	snprintf(v->verdict, sizeof(v->verdict), "%s", verdict);
	v->why = strdup(why);
	if (!v->why)
		return -ENOMEM;
	l->nr++;
	return 0;
}

static void hung_free(struct hung_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i].why);
	free(l->v);
}

static const struct hung *hung_of(const struct hung_list *l,
				  const struct actrack_snap_process *p,
				  uint32_t tid)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->v[i].p == p && l->v[i].tid == tid)
			return &l->v[i];
	return NULL;
}

/* "4242 'main' lock-acquire lock 0x5000[, deadlock: WHY]" */
static void thread_text(FILE *f, const struct hung_list *l,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t)
{
	const struct hung *h = hung_of(l, p, t->tid);
	char obj[96];

	fprintf(f, "%u '", t->tid);
	cli_print_escaped(f, t->name, sizeof(t->name));
	fputc('\'', f);
	if (t->nr_activities) {
		const struct actrack_activity *a =
			&t->activities[t->nr_activities - 1].a;

		fprintf(f, " %s %s", actrack_activity_name(a->type),
			cli_activity_object(obj, sizeof(obj), a));
	} else {
		fputs(" no activity", f);
	}
	if (h)
		fprintf(f, ", %s: %s", h->verdict, h->why);
}

/* "4242 server (THREAD; THREAD)" */
static void process_text(FILE *f, const struct hung_list *l,
			 const struct actrack_snap_process *p)
{
	char comm[40], esc[64];

	hangs_process_comm(p, comm, sizeof(comm));
	cli_escape(esc, sizeof(esc), comm, sizeof(comm), 0);
	fprintf(f, "%u %s (", p->pid, esc[0] ? esc : "?");
	for (uint32_t k = 0; k < p->nr_threads; k++) {
		if (k)
			fputs("; ", f);
		thread_text(f, l, p, &p->threads[k]);
	}
	if (!p->nr_threads)
		fputs("no threads", f);
	fputc(')', f);
}

/* What the entry's two renderings read (cli_render_string()'s @arg). */
struct entry_in {
	const struct boot_image *img;
	const struct hung_list *l;
};

static void message_text(FILE *f, const void *arg)
{
	const struct entry_in *in = arg;
	const struct boot_image *img = in->img;
	uint32_t shown = 0;

	if (!img->nr_processes)
		fprintf(f, "previous boot %s ended with no tracked process "
			"running", img->boot_hex);
	else
		fprintf(f, "previous boot %s ended while %u process%s %s "
			"running: ", img->boot_hex, img->nr_processes,
			img->nr_processes == 1 ? "" : "es",
			img->nr_processes == 1 ? "was" : "were");
	for (uint32_t a = 0; a < img->nr_arenas; a++) {
		const struct actrack_snapshot *s = img->snaps[a];

		for (uint32_t i = 0; i < s->nr_processes; i++) {
			if (shown == MESSAGE_MAX_PROCESSES)
				break;
			if (shown++)
				fputs(", ", f);
			process_text(f, in->l, &s->processes[i]);
		}
	}
	if (shown < img->nr_processes)
		fprintf(f, ", and %u more", img->nr_processes - shown);
	if (img->nr_unreadable || img->nr_corrupt || img->nr_torn)
		fprintf(f, "; unreadable: %u arena%s refused, %u with bad "
			"records skipped, %u torn thread%s",
			img->nr_unreadable, img->nr_unreadable == 1 ? "" : "s",
			img->nr_corrupt, img->nr_torn,
			img->nr_torn == 1 ? "" : "s");
}

static void report_hung(struct json *j, const struct hung_list *l)
{
	json_key(j, "hung");
	json_array_begin(j);
	for (size_t i = 0; i < l->nr; i++) {
		json_object_begin(j);
		json_kv_u64(j, "pid", l->v[i].p->pid);
		json_kv_u64(j, "tid", l->v[i].tid);
		json_kv_string(j, "verdict", l->v[i].verdict, 16);
		json_kv_string(j, "why", l->v[i].why, 4096);
		json_object_end(j);
	}
	json_array_end(j);
}

/* ACTRACK_REPORT: one line, schema "actrack-previous-boot/1". */
static void report_json(FILE *f, const void *arg)
{
	const struct entry_in *in = arg;
	const struct boot_image *img = in->img;
	struct json j;

	json_init(&j, f, 0);
	json_object_begin(&j);
	json_kv_string(&j, "schema", "actrack-previous-boot/1", 32);
	json_kv_string(&j, "boot_id", img->boot_hex, 32);
	json_kv_u64(&j, "processes", img->nr_processes);
	json_kv_u64(&j, "unreadable_arenas", img->nr_unreadable);
	json_kv_u64(&j, "corrupt_arenas", img->nr_corrupt);
	json_kv_u64(&j, "torn_threads", img->nr_torn);
	json_kv_u64(&j, "lost_records", img->nr_lost);
	report_hung(&j, in->l);
	json_key(&j, "arenas");
	json_array_begin(&j);
	for (uint32_t a = 0; a < img->nr_arenas; a++) {
		const struct actrack_snapshot *s = img->snaps[a];
		const struct render r = { .now = cli_now(s, NULL) };

		json_object_begin(&j);
		json_kv_u64(&j, "uid", img->uids[a]);
		json_kv_u64_str(&j, "now_ns", r.now);
		json_key(&j, "processes");
		json_array_begin(&j);
		for (uint32_t i = 0; i < s->nr_processes; i++)
			render_process_json(&r, &j, &s->processes[i]);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

/* The entry of @img.  Return 0 or -errno. */
static int send_entry(const struct boot_image *img)
{
	struct hung_list l = { 0 };
	const struct entry_in in = { img, &l };
	struct journal_boot e = {
		.boot_id = img->boot_hex, .processes = img->nr_processes,
		.arenas = img->nr_arenas, .unreadable = img->nr_unreadable,
		.corrupt = img->nr_corrupt, .torn = img->nr_torn,
		.lost = img->nr_lost,
	};
	char *msg = NULL, *report = NULL;
	int ret = 0;

	for (uint32_t a = 0; !ret && a < img->nr_arenas; a++)
		ret = hangs_image(img->snaps[a], add_hung, &l);
	if (!ret) {
		msg = cli_render_string(message_text, &in, NULL);
		report = cli_render_string(report_json, &in, NULL);
		ret = msg && report ? 0 : -ENOMEM;
	}
	if (!ret) {
		e.message = msg;
		e.report = report;
		ret = journal_send_previous_boot(&e);
	}
	free(msg);
	free(report);
	hung_free(&l);
	return ret;
}

/*
 * Claim @img for this monitor: its mark, made exclusively, so that of
 * monitors started in one boot only the first writes the entry.
 * Return: 0 (ours), -EEXIST (logged already), -errno.
 */
static int mark(const struct boot_image *img, char *path, size_t len)
{
	int fd;

	if (mkdir(PREVIOUS_BOOT_MARK_DIR, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, len, PREVIOUS_BOOT_MARK_DIR "/previous-boot.%s",
		 img->boot_hex);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

bool previous_boot_log(void)
{
	struct boot_image img;
	char path[128];
	int ret;

	ret = boot_image_read(&img);
	/* No image; or a module before ABI 1.8, which refuses the flag. */
	if (ret == -ENODATA || ret == -EINVAL)
		return false;
	if (ret) {
		cli_errorf("monitor: the previous boot's image: %s",
			   ret == -EUCLEAN ? "no arena of it is readable" :
			   strerror(-ret));
		return false;
	}
	ret = mark(&img, path, sizeof(path));
	if (ret && ret != -EEXIST)
		cli_errorf("monitor: the previous boot's image: %s: %s",
			   PREVIOUS_BOOT_MARK_DIR, strerror(-ret));
	if (!ret) {
		ret = send_entry(&img);
		if (ret) {
			unlink(path);
			cli_errorf("monitor: the previous boot's image: "
				   "cannot write its journal entry: %s",
				   strerror(-ret));
		}
	}
	boot_image_free(&img);
	return !ret;
}
