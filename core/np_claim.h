/* np_claim: which copy of numapin acts in this process.
 *
 * One process may load numapin twice: the Debian package's agent through
 * JAVA_TOOL_OPTIONS and a build tree's on the command line, or a second
 * jcmd attach.  Each copy is a separate library with its own statics, so
 * the claim is process-wide: an anonymous file (memfd) named
 * "numapin-agent", holding the acting copy's description, which any copy
 * finds among the process's open files.  It dies with the process and is
 * not inherited across exec (close-on-exec).  Copies load one after the
 * other (Agent_OnLoad calls are sequential, attaches are served one at a
 * time), so finding and creating the mark need no lock. */
#ifndef NP_CLAIM_H
#define NP_CLAIM_H

#include <stddef.h>

#define NP_CLAIM_TAKEN (-2)

/* Claims the process for this copy, described by `who` (the library's
 * path and options).  Returns the mark's descriptor (>= 0) when this copy
 * acts, to keep open as long as it does; NP_CLAIM_TAKEN when another copy
 * already acts (its description into other); -1 when no mark can be made
 * (this copy acts all the same). */
int np_claim_take(const char *who, char *other, size_t len);

/* The acting copy's description into other.  Returns 0, or -1 when no
 * copy has marked the process. */
int np_claim_read(char *other, size_t len);

/* Gives the process up (a copy that failed to start): another copy may
 * act.  -1 is ignored. */
void np_claim_release(int fd);

/* The path of the library this code is in (dladdr), or "libnumapin.so". */
const char *np_claim_self(char *buf, size_t len);

#endif
