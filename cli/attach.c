#define _GNU_SOURCE
#include "attach.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* HotSpot's PerfDataPrologue and PerfDataEntry (perfMemory.hpp): a 32-byte
 * prologue whose magic is stored big-endian and whose byte_order says how
 * the rest is stored, then entries of 20-byte headers. */
#define PERF_MAGIC 0xcafec0c0u
#define PROLOGUE_SIZE 32
#define ENTRY_HEADER_SIZE 20

static uint32_t get32(const unsigned char *p, int little)
{
    return little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                  : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

int np_perfdata_string(const unsigned char *buf, size_t len, const char *name, char *out,
                       size_t outlen)
{
    if (len < PROLOGUE_SIZE || get32(buf, 0) != PERF_MAGIC || outlen == 0)
        return -1;
    int little = buf[4] == 1;
    uint32_t used = get32(buf + 8, little);
    size_t off = get32(buf + 24, little);
    uint32_t n = get32(buf + 28, little);
    if (used < len)
        len = used;
    for (uint32_t i = 0; i < n && off + ENTRY_HEADER_SIZE <= len; i++) {
        const unsigned char *e = buf + off;
        uint32_t elen = get32(e, little), name_off = get32(e + 4, little);
        uint32_t vlen = get32(e + 8, little), data_off = get32(e + 16, little);
        if (elen < ENTRY_HEADER_SIZE || elen > len - off)
            return -1;
        /* The name and the data lie within the entry. */
        if (name_off < ENTRY_HEADER_SIZE || name_off >= elen || data_off > elen)
            return -1;
        const char *ename = (const char *)e + name_off;
        size_t room = elen - name_off;
        if (strnlen(ename, room) < room && strcmp(ename, name) == 0) {
            if (e[12] != 'B' || vlen == 0 || vlen > elen - data_off)
                return -1; /* not a string */
            size_t k = strnlen((const char *)e + data_off, vlen);
            if (k >= outlen)
                k = outlen - 1;
            memcpy(out, e + data_off, k);
            out[k] = '\0';
            return 0;
        }
        off += elen;
    }
    return -1;
}

/* The value of a "Key:\t..." line of /proc/PID/status, into buf. */
static int status_field(pid_t pid, const char *key, char *buf, size_t len)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    size_t klen = strlen(key);
    int rc = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            const char *v = line + klen + 1;
            v += strspn(v, " \t");
            snprintf(buf, len, "%.*s", (int)strcspn(v, "\n"), v);
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

static int maps_libjvm(pid_t pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        const char *slash = strrchr(line, '/');
        found = slash != NULL && strncmp(slash, "/libjvm.so", 10) == 0 &&
                (slash[10] == '\n' || slash[10] == '\0');
    }
    fclose(f);
    return found;
}

/* The process's PID in its own namespace: the last NSpid value. */
static long own_pid(pid_t pid)
{
    char v[256];
    if (status_field(pid, "NSpid", v, sizeof v) != 0)
        return pid;
    const char *last = strrchr(v, '\t');
    last = last != NULL ? last + 1 : v;
    return strtol(last, NULL, 10);
}

/* Reads the process's hsperfdata file (in its /tmp, owned by its user)
 * into buf.  Returns the bytes read, or -1. */
static ssize_t read_perfdata(pid_t pid, long nspid, uid_t uid, unsigned char *buf, size_t len)
{
    char dir[96];
    snprintf(dir, sizeof dir, "/proc/%d/root/tmp", (int)pid);
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    ssize_t got = -1;
    struct dirent *de;
    while (got < 0 && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "hsperfdata_", 11) != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s/%ld", dir, de->d_name, nspid);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid)
            got = read(fd, buf, len);
        close(fd);
    }
    closedir(d);
    return got;
}

int np_attach_safe(pid_t pid, char *why, size_t len)
{
    int jvm = maps_libjvm(pid);
    if (jvm < 0) {
        snprintf(why, len, "its memory map cannot be read (%s)", strerror(errno));
        return 0;
    }
    if (!jvm) {
        snprintf(why, len, "it is not a JVM (no libjvm.so mapped)");
        return 0;
    }
    long nspid = own_pid(pid);
    char path[96];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/root/tmp/.java_pid%ld", (int)pid, nspid);
    if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        return 1; /* the attach listener runs: no signal needed */
    char caught[64];
    unsigned long long mask = 0;
    if (status_field(pid, "SigCgt", caught, sizeof caught) == 0)
        mask = strtoull(caught, NULL, 16);
    if (!(mask & (1ull << (SIGQUIT - 1)))) {
        snprintf(why, len, "it does not catch SIGQUIT (started with -Xrs, or still starting), "
                           "and the attach handshake's SIGQUIT would end it");
        return 0;
    }
    char uid_line[128];
    uid_t uid = (uid_t)-1;
    if (status_field(pid, "Uid", uid_line, sizeof uid_line) == 0)
        uid = (uid_t)strtoul(uid_line, NULL, 10);
    unsigned char buf[65536], caps[128];
    ssize_t n = read_perfdata(pid, nspid, uid, buf, sizeof buf);
    if (n < 0) {
        snprintf(why, len, "its performance data (hsperfdata, absent under -XX:-UsePerfData) "
                           "cannot be read, so whether it allows attach is unknown");
        return 0;
    }
    if (np_perfdata_string(buf, (size_t)n, "sun.rt.jvmCapabilities", (char *)caps,
                           sizeof caps) != 0) {
        snprintf(why, len, "its performance data does not say whether it allows attach");
        return 0;
    }
    if (caps[0] != '1') {
        snprintf(why, len, "it does not allow attach (-XX:+DisableAttachMechanism)");
        return 0;
    }
    return 1;
}

int np_attach_dump(pid_t pid, char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/%d/root/tmp/.java_pid%ld", (int)pid,
             own_pid(pid));
    char uid_line[128], *euid = NULL;
    struct stat st;
    /* Uid: real, effective, saved, filesystem; HotSpot makes the socket
     * as the effective one. */
    if (status_field(pid, "Uid", uid_line, sizeof uid_line) == 0)
        (void)strtoul(uid_line, &euid, 10);
    if (euid == NULL || stat(sa.sun_path, &st) != 0 || !S_ISSOCK(st.st_mode) ||
        st.st_uid != (uid_t)strtoul(euid, NULL, 10)) {
        snprintf(err, errlen, "no attach socket of the process's user at %s", sa.sun_path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    struct timeval limit = {.tv_sec = NP_ATTACH_TIMEOUT};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    struct ucred peer;
    socklen_t plen = sizeof peer;
    /* Protocol 1: the version, the command and three arguments, each
     * NUL-terminated; the answer is a status line, then the output. */
    static const char request[] = "1\0threaddump\0\0\0";
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    /* The listening end must be the process itself, not one that made a
     * socket of that name in its /tmp. */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0 || peer.pid != pid) {
        snprintf(err, errlen, "%s is not the process's own attach socket", sa.sun_path);
        close(fd);
        return -1;
    }
    if (send(fd, request, sizeof request, MSG_NOSIGNAL) != (ssize_t)sizeof request) {
        snprintf(err, errlen, "cannot write to %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    char *buf;
    size_t n;
    int rc = cli_read_fd(fd, 0, NP_ATTACH_MAX_BYTES, &buf, &n);
    int e = errno;
    close(fd);
    if (rc != 0) {
        if (e == EFBIG || e == ENOMEM)
            snprintf(err, errlen, "the thread dump is larger than %d MiB or memory ran out",
                     NP_ATTACH_MAX_BYTES >> 20);
        else
            snprintf(err, errlen, "reading %s: %s", sa.sun_path,
                     e == EAGAIN ? "no answer in time" : strerror(e));
        return -1;
    }
    char *body = memchr(buf, '\n', n);
    if (body == NULL || strncmp(buf, "0\n", 2) != 0) {
        snprintf(err, errlen, "the JVM refused the thread dump (status %.*s)",
                 body != NULL ? (int)(body - buf) : 0, buf);
        free(buf);
        return -1;
    }
    body++;
    *len = n - (size_t)(body - buf);
    memmove(buf, body, *len + 1);
    *out = buf;
    return 0;
}
