/* SPDX-License-Identifier: MIT */
/*
 * Netlink attribute sets read by a policy table (lib/report_parse.c), in
 * the way of the kernel's struct nla_policy and libbpf's
 * libbpf_nla_parse(): one line per attribute says its type, its length
 * and where its value goes, so that adding an attribute is one table line
 * and one field.  Internal to the library.
 */
#ifndef ACTRACK_LIB_REPORT_PARSE_H
#define ACTRACK_LIB_REPORT_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

/* What is done with a valid attribute. */
enum rp_store {
	RP_SKIP,	/* unknown to us (a newer kernel's), PAD: ignored */
	RP_INT,		/* u32 or u64 into the integer field at .off */
	RP_OR,		/* u32 or-ed into the u32 field at .off */
	RP_TRUE,	/* flag: the bool field at .off becomes true */
	RP_STRING,	/* string cut into the char[.size] at .off */
	RP_BYTES,	/* exactly .len bytes copied to .off */
	RP_NEST,	/* a nested set read by .nest into the object at .off */
	RP_FN,		/* given to .fn */
};

typedef int (*rp_fn)(const struct nlattr *attr, void *obj, void *ctx);

/*
 * The policy of one attribute type, indexed by it.  .mnl is the libmnl
 * type it is validated as (with .len an exact payload length if not 0);
 * every attribute appears at most once unless .multi.  .ctx: the field is
 * in the caller's context, not in the object.  RP_INT values outside
 * [.min, .max] (when .max is not 0) make the message malformed.  RP_NEST:
 * the set is read by .nest (entries 0..nest_max) and must hold every
 * type of the mask .need.
 */
struct rp_policy {
	uint8_t store;			/* enum rp_store */
	uint8_t mnl;			/* enum mnl_attr_data_type */
	uint8_t multi : 1, ctx : 1;
	uint16_t len;
	uint16_t off, size;
	uint32_t min, max;
	rp_fn fn;
	const struct rp_policy *nest;
	uint16_t nest_max;
	uint64_t need;
};

/*
 * __actrack_rp_parse() - walk the attributes in [@start, @start + @len) and apply
 * @pol (entries 0..@max) to each: validated, stored into @obj (or @ctx),
 * or handed to .fn(attr, @obj, @ctx).  Bytes left after the last whole
 * attribute, an invalid attribute, a repeated one without .multi, or a
 * handler's error make the set malformed.  @seen (may be NULL) gets a
 * bit per attribute type met (types below 64).
 * Return: 0, -EBADMSG, or a handler's -errno.
 */
__attribute__((visibility("hidden")))
int __actrack_rp_parse(const struct rp_policy *pol, uint16_t max,
		       const void *start, size_t len, void *obj, void *ctx,
		       uint64_t *seen);

/*
 * __actrack_rp_nest() - the one reader of a nested attribute set: @attr's
 * payload read by @pol (entries 0..@max) into @obj, as by
 * __actrack_rp_parse(); every type of the mask @need must be there.
 * Return: 0, -EBADMSG, or a handler's -errno.
 */
__attribute__((visibility("hidden")))
int __actrack_rp_nest(const struct rp_policy *pol, uint16_t max,
		      uint64_t need, const struct nlattr *attr, void *obj);

/* __actrack_rp_walk() - the same walk, calling @fn on every attribute (none if @fn
 * is NULL: only checks that the set is whole). */
__attribute__((visibility("hidden")))
int __actrack_rp_walk(const void *start, size_t len,
		      int (*fn)(const struct nlattr *attr, void *data),
		      void *data);

#endif /* ACTRACK_LIB_REPORT_PARSE_H */
