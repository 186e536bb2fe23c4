/*
 * What tree-sitter-tlaplus's scanner cannot hold, refused before it parses. The scanner keeps the
 * column of every open junction list (/\ or \/ bullets) in tree-sitter's 1024-byte state, 3 bytes
 * a list, without a bound check, and columns as 16-bit numbers: lists nested more than about 336
 * deep overflow it (an assertion or a crash inside the library), and a bullet past column 32767
 * wraps (a wrong syntax error). This scan finds both from the text alone.
 *
 * It follows the layout rule: a bullet opens a list at its column when it is the first token of
 * its line, or follows only bullets, an opening bracket, ==, :, ->, a comma, THEN, ELSE or IN on
 * it, at a column right of the innermost open list; the first token of a line closes the lists
 * at or right of its column (a bullet only those right of it). Strings and comments are skipped.
 * The count is an upper bound of the scanner's, which is what a guard needs.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "junction_check.h"

#define MAX_NESTING 300
#define MAX_COLUMN 32767

static bool opens_after(const char *tok, size_t n)
{
	static const char *const openers[] = { "==", "(", "[", "{", ":", "->", ",", "THEN", "ELSE", "IN", "<<", NULL };
	for (const char *const *o = openers; *o; o++)
		if (strlen(*o) == n && !memcmp(*o, tok, n))
			return true;
	return false;
}

static bool is_bullet(const char *p, size_t left)
{
	return left >= 2 && ((p[0] == '/' && p[1] == '\\') || (p[0] == '\\' && p[1] == '/'));
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int junction_check(const char *src, size_t len, struct junction_issue *issue)
{
	uint32_t stack[MAX_NESTING + 1];
	uint32_t depth = 0, line = 1, col = 1, comment = 0;
	bool first = true;           /* no token yet on this line */
	bool may_open = true;        /* a bullet here would start a list */
	for (size_t i = 0; i < len;) {
		char c = src[i];
		if (c == '\n') {
			line++, col = 1, i++;
			first = may_open = true;
			continue;
		}
		if (comment) { /* (* ... *), nested */
			if (c == '*' && i + 1 < len && src[i + 1] == ')')
				comment--, i += 2, col += 2;
			else if (c == '(' && i + 1 < len && src[i + 1] == '*')
				comment++, i += 2, col += 2;
			else
				i++, col++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			i++, col++;
			continue;
		}
		if (c == '(' && i + 1 < len && src[i + 1] == '*') {
			comment = 1, i += 2, col += 2;
			continue;
		}
		if (c == '\\' && i + 1 < len && src[i + 1] == '*') { /* to the end of the line */
			while (i < len && src[i] != '\n')
				i++;
			continue;
		}
		if (first && col == 1 && len - i >= 4 && (!memcmp(src + i, "----", 4) || !memcmp(src + i, "====", 4)))
			depth = 0; /* a module starts or ends: no list is open */
		bool bullet = is_bullet(src + i, len - i);
		if (first) {
			while (depth && (bullet ? stack[depth - 1] > col : stack[depth - 1] >= col))
				depth--;
			first = false;
		}
		if (bullet) {
			if (may_open && (!depth || stack[depth - 1] < col)) {
				if (col > MAX_COLUMN) {
					*issue = (struct junction_issue){ line, col, "a /\\ or \\/ bullet past column 32767, "
										   "which the TLA+ grammar cannot hold: "
										   "break the line" };
					return -1;
				}
				if (depth == MAX_NESTING) {
					*issue = (struct junction_issue){ line, col, "/\\ and \\/ lists nested more than 300 "
										   "deep, which the TLA+ grammar cannot hold: "
										   "name some of them as definitions" };
					return -1;
				}
				stack[depth++] = col;
			}
			i += 2, col += 2;
			may_open = true;
			continue;
		}
		/* Any other token: a string, a word, or one symbol at a time. */
		size_t start = i;
		if (c == '"') {
			for (i++; i < len && src[i] != '"' && src[i] != '\n'; i++)
				if (src[i] == '\\' && i + 1 < len)
					i++;
			if (i < len && src[i] == '"')
				i++;
		} else if (word_char(c)) {
			while (i < len && word_char(src[i]))
				i++;
		} else if (len - i >= 2 && (!memcmp(src + i, "==", 2) || !memcmp(src + i, "->", 2) ||
					    !memcmp(src + i, "<<", 2))) {
			i += 2;
		} else {
			i++;
		}
		may_open = opens_after(src + start, i - start);
		col += (uint32_t)(i - start);
	}
	return 0;
}
