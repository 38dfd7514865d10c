/* np_text: thread names as their readers take them.
 *
 * The JVM gives names in modified UTF-8 (JVMTI, JNI, jcmd's thread dump):
 * a supplementary character as two 3-byte surrogates, U+0000 as C0 80,
 * and a lone surrogate as it is, none of which is UTF-8.  A name is turned
 * into UTF-8 once, where it enters (agent/agent.c, cli/inspect.c), and
 * every output reads that text:
 *
 * - the text (np_text_from_mutf8) is valid UTF-8 without U+0000: a
 *   surrogate pair becomes its character; a lone surrogate, U+0000, and
 *   any byte that begins no character become U+FFFD;
 * - where the text is not the name exactly, the escaped form keeps it
 *   (the JSON report's "name_escaped", docs/report.md): the text with each
 *   backslash written `\\`, and in place of each U+FFFD put there, the
 *   UTF-16 unit it stands for as `\uXXXX` (lowercase hex: `\ud800`,
 *   `\u0000`) or a byte that began no character as `\xNN`;
 * - what a person reads (the page, the pictures, the live view) shows the
 *   text with the characters that change how other text looks written
 *   out (np_text_shown): controls, and Unicode's format characters
 *   (bidirectional embeddings, overrides and isolates, zero-width
 *   characters) and line and paragraph separators, so that a name cannot
 *   reverse, hide or break the rest of its line.
 *
 * Everything here is pure and allocates only where it says so. */
#ifndef NP_TEXT_H
#define NP_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* True when s (NUL-terminated) is valid UTF-8, so that np_text_from_mutf8
 * would give it back unchanged: the test a name takes before any copy. */
bool np_text_is_utf8(const char *s);

/* The UTF-8 text of the NUL-terminated modified UTF-8 (or UTF-8) string
 * `in`, newly allocated (free()); and in *escaped, when the text is not
 * `in` exactly, the escaped form, newly allocated, else NULL.  Returns
 * NULL (and *escaped NULL) when memory runs out. */
char *np_text_from_mutf8(const char *in, char **escaped);

/* The modified UTF-8 of the UTF-8 text `in` (for JNI's NewStringUTF):
 * each supplementary character as its two surrogates, newly allocated
 * (free()); bytes that begin no character become U+FFFD.  NULL when
 * memory runs out. */
char *np_text_to_mutf8(const char *in);

/* Decodes one UTF-8 character at s (NUL-terminated); its code point in
 * *cp and its length in bytes (1 to 4) returned.  A byte that begins no
 * valid character (an overlong form, a surrogate, a cut sequence) gives
 * U+FFFD and length 1; at the end of s, 0 and *cp 0. */
size_t np_text_next(const char *s, unsigned *cp);

/* True for a character np_text_shown writes out: a control (U+0000 to
 * U+001F, U+007F to U+009F), a format character (Unicode's category Cf,
 * the bidirectional controls among them) or a line or paragraph
 * separator (U+2028, U+2029). */
bool np_text_hidden(unsigned cp);

/* Copies the UTF-8 text `in` into buf for a person to read: characters
 * np_text_hidden names as `\xNN` (below U+0080) or `\uXXXX`
 * (`\U00XXXXXX` beyond the BMP), a backslash as `\\`, invalid bytes as
 * U+FFFD, everything else as it is.  Cut at a whole character when buf
 * is short; always NUL-terminated when len > 0.  Returns the bytes
 * written. */
size_t np_text_shown(char *buf, size_t len, const char *in);

/* The same, newly allocated (free()), however long; NULL when memory
 * runs out. */
char *np_text_shown_dup(const char *in);

#endif
