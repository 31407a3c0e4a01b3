#!/usr/bin/awk -f
# SPDX-License-Identifier: MIT
#
# man2help: the actrack CLI's --help pages, made from the man pages at build
# time so that each page is written once (man/*.1).
#
#   awk -f cli/man2help.awk man/actrack.1 man/actrack-dump.1 ... >help.c
#
# Writes one C file: a string per page (plain text, sections at column 0,
# text filled to 76 columns and indented 4, option tags at 4 with their text
# at 8) and cli_help_page(), which returns the page of a command ("dump"
# for actrack-dump.1) or of actrack itself ("" for actrack.1), NULL for
# none.  It reads the subset of man(7) the pages use: .TH .SH .SS .PP .TP .IP
# .RS .RE .nf .fi .in .br .sp, the font macros (.B .I .BR .RB .IR .RI .BI
# .IB) and the escapes \f[BIRP] \- \e \(bu \(em \& and "\ ".  POSIX awk.

function flush_par(    out, line, i, w, sep, width, ind, first)
{
	if (!nwords)
		return
	ind = indent
	first = prefix
	line = ""
	for (i = 1; i <= nwords; i++) {
		w = words[i]
		sep = (line == "") ? "" : (sentence[i - 1] ? "  " : " ")
		width = length(sp(ind)) + length(first) + length(line) + \
			length(sep) + length(w)
		if (line != "" && width > 76) {
			emit(sp(ind) first line)
			first = (first == "") ? "" : sp(length(first))
			line = w
		} else {
			line = line sep w
		}
	}
	emit(sp(ind) first line)
	nwords = 0
	prefix = ""
}

function sp(n,    s)
{
	s = ""
	while (n-- > 0)
		s = s " "
	return s
}

# @s as the body of a C string literal.  By hand: awk implementations
# disagree about backslashes in gsub()'s replacement.
function c_escape(s,    out, i, c)
{
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" || c == "\"")
			out = out "\\"
		out = out c
	}
	return out
}

function emit(s)
{
	sub(/ +$/, "", s)
	page = page "\"" c_escape(s) "\\n\"\n"
	blank_pending = 0
}

function blank()
{
	flush_par()
	if (page != "" && !blank_pending) {
		page = page "\"\\n\"\n"
		blank_pending = 1
	}
}

# The text of a line: font changes dropped, escapes resolved.
function text(s)
{
	gsub(/\\f[BIRP]/, "", s)
	gsub(/\\&/, "", s)
	gsub(/\\-/, "-", s)
	gsub(/\\\(bu/, "-", s)
	gsub(/\\\(em/, "--", s)
	gsub(/\\\(aq/, "'", s)
	gsub(/\\\(dq/, "\"", s)
	gsub(/\\ /, " ", s)
	gsub(/\\e/, "\\", s)
	return s
}

# The arguments of a macro line: quoted groups stay together.
function args(s, out,    n, c, cur, inq, i, started)
{
	n = 0
	cur = ""
	inq = 0
	started = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\"") {
			inq = !inq
			started = 1
			continue
		}
		if (c == " " && !inq) {
			if (started)
				out[++n] = cur
			cur = ""
			started = 0
			continue
		}
		cur = cur c
		started = 1
	}
	if (started)
		out[++n] = cur
	return n
}

function add_words(s,    n, i, w)
{
	s = text(s)
	n = split(s, w, / +/)
	for (i = 1; i <= n; i++) {
		if (w[i] == "")
			continue
		words[++nwords] = w[i]
		sentence[nwords] = 0
	}
	# One sentence a line, as man pages are written: two spaces after it.
	if (nwords && words[nwords] ~ /[.!?][)"']?$/)
		sentence[nwords] = 1
}

function add_text(s)
{
	if (nofill) {
		emit(sp(indent + in_off) text(s))
		return
	}
	if (tp_tag) {
		tp_tag = 0
		emit(sp(indent - 4) text(s))
		return
	}
	add_words(s)
}

function end_page(    name)
{
	if (cur_file == "")
		return
	flush_par()
	sub(/\n$/, "", page)
	name = cur_file
	sub(/.*\//, "", name)
	sub(/\.1$/, "", name)
	sub(/^actrack-?/, "", name)
	nr_pages++
	page_name[nr_pages] = name
	printf "static const char page_%d[] =\n%s;\n\n", nr_pages, page
}

BEGIN {
	print "/* Generated from the man pages by cli/man2help.awk: do not edit. */"
	print "#include <stddef.h>"
	print "#include <string.h>"
	print "#include \"cli.h\""
	print ""
}

FILENAME != cur_file {
	end_page()
	cur_file = FILENAME
	page = ""
	section = ""
	nwords = 0
	indent = 4
	in_off = 0
	nofill = 0
	tp_tag = 0
	prefix = ""
	blank_pending = 0
}

/^\.\\"/ || /^\.$/ || /^\.TH / { next }

/^\.SH/ {
	n = args(substr($0, 4), a)
	section = ""
	for (i = 1; i <= n; i++)
		section = section (i > 1 ? " " : "") a[i]
	blank()
	indent = 4
	tp_tag = 0
	emit(text(section))
	next
}

# A subsection heading: indented 2, as man(1) shows it.
/^\.SS/ {
	n = args(substr($0, 4), a)
	heading = ""
	for (i = 1; i <= n; i++)
		heading = heading (i > 1 ? " " : "") a[i]
	blank()
	indent = 4
	tp_tag = 0
	emit("  " text(heading))
	next
}

/^\.(PP|P|LP)( |$)/ { blank(); indent = 4; next }
/^\.TP/ { flush_par(); indent = 8; tp_tag = 1; next }
/^\.IP/ {
	flush_par()
	n = args(substr($0, 4), a)
	indent = 4
	prefix = (n >= 1 && a[1] != "") ? text(a[1]) " " : ""
	next
}
/^\.RS/ { flush_par(); indent += 4; next }
/^\.RE/ { flush_par(); indent -= 4; if (indent < 4) indent = 4; next }
/^\.br/ { flush_par(); next }
/^\.sp/ { blank(); next }
/^\.nf/ { flush_par(); nofill = 1; next }
/^\.fi/ { nofill = 0; next }
/^\.in/ {
	in_off = ($2 ~ /^\+/) ? $2 + 0 : 0
	next
}

# Font macros: .B and .I join their arguments with spaces, the others
# alternate fonts between arguments with nothing in between.
/^\.(B|I) / {
	n = args(substr($0, 4), a)
	s = ""
	for (i = 1; i <= n; i++)
		s = s (i > 1 ? " " : "") a[i]
	add_text(s)
	next
}
/^\.(BR|RB|IR|RI|BI|IB) / {
	n = args(substr($0, 5), a)
	s = ""
	for (i = 1; i <= n; i++)
		s = s a[i]
	add_text(s)
	next
}
/^\./ {
	printf "man2help: %s:%d: unknown request %s\n", FILENAME, FNR, $1 \
		>"/dev/stderr"
	failed = 1
	exit 1
}

{
	line = $0
	# NAME: "actrack\-dump \- ..." is the page of "actrack dump".
	if (section == "NAME")
		sub(/^actrack\\-/, "actrack ", line)
	add_text(line)
}

END {
	if (failed)
		exit 1
	end_page()
	print "const char *cli_help_page(const char *name)"
	print "{"
	print "\tstatic const struct { const char *name, *text; } pages[] = {"
	for (i = 1; i <= nr_pages; i++)
		printf "\t\t{ \"%s\", page_%d },\n", page_name[i], i
	print "\t};"
	print ""
	print "\tfor (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)"
	print "\t\tif (!strcmp(pages[i].name, name))"
	print "\t\t\treturn pages[i].text;"
	print "\treturn NULL;"
	print "}"
}
