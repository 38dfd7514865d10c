/* np_attach: HotSpot performance data read safely, and which processes
 * `numapin check` may ask for a thread dump. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "attach.h"
#include "tests.h"

static void put32(unsigned char *p, uint32_t v, int little)
{
    for (int i = 0; i < 4; i++)
        p[little ? i : 3 - i] = (unsigned char)(v >> (8 * i));
}

/* A performance data buffer holding one long counter and one string, as
 * HotSpot lays it out; returns its length. */
static size_t perfdata(unsigned char *b, size_t cap, int little, const char *caps)
{
    memset(b, 0, cap);
    put32(b, 0xcafec0c0u, 0); /* the magic is big-endian whatever the order */
    b[4] = (unsigned char)little;
    b[5] = 2;
    size_t off = 32;
    put32(b + 24, (uint32_t)off, little);
    put32(b + 28, 2, little);
    /* entry 0: "sun.rt.createVmBeginTime", a long */
    const char *n0 = "sun.rt.createVmBeginTime";
    size_t l0 = 20 + strlen(n0) + 1 + 8;
    put32(b + off, (uint32_t)l0, little);
    put32(b + off + 4, 20, little);
    b[off + 12] = 'J';
    put32(b + off + 16, (uint32_t)(20 + strlen(n0) + 1), little);
    memcpy(b + off + 20, n0, strlen(n0) + 1);
    off += l0;
    /* entry 1: "sun.rt.jvmCapabilities", a byte vector */
    const char *n1 = "sun.rt.jvmCapabilities";
    size_t vlen = 64, l1 = 20 + strlen(n1) + 1 + vlen;
    put32(b + off, (uint32_t)l1, little);
    put32(b + off + 4, 20, little);
    put32(b + off + 8, (uint32_t)vlen, little);
    b[off + 12] = 'B';
    put32(b + off + 16, (uint32_t)(20 + strlen(n1) + 1), little);
    memcpy(b + off + 20, n1, strlen(n1) + 1);
    memcpy(b + off + 20 + strlen(n1) + 1, caps, strlen(caps));
    off += l1;
    put32(b + 8, (uint32_t)off, little);
    return off;
}

START_TEST(reads_the_capabilities_string)
{
    unsigned char b[512];
    char out[128];
    for (int little = 0; little <= 1; little++) {
        size_t n = perfdata(b, sizeof b, little, "1100000000");
        ck_assert_int_eq(np_perfdata_string(b, n, "sun.rt.jvmCapabilities", out, sizeof out), 0);
        ck_assert_str_eq(out, "1100000000");
        ck_assert_int_eq(np_perfdata_string(b, n, "sun.rt.other", out, sizeof out), -1);
        /* A long is no string. */
        ck_assert_int_eq(np_perfdata_string(b, n, "sun.rt.createVmBeginTime", out, sizeof out), -1);
    }
}
END_TEST

START_TEST(refuses_what_is_not_performance_data)
{
    unsigned char b[512];
    char out[128];
    size_t n = perfdata(b, sizeof b, 1, "1");
    /* Cut anywhere: never read past the end. */
    for (size_t cut = 0; cut < n; cut++)
        np_perfdata_string(b, cut, "sun.rt.jvmCapabilities", out, sizeof out);
    ck_assert_int_eq(np_perfdata_string(b, 16, "sun.rt.jvmCapabilities", out, sizeof out), -1);
    b[0] = 0;
    ck_assert_int_eq(np_perfdata_string(b, n, "sun.rt.jvmCapabilities", out, sizeof out), -1);
    /* An entry longer than the buffer. */
    n = perfdata(b, sizeof b, 1, "1");
    put32(b + 32, 100000, 1);
    ck_assert_int_eq(np_perfdata_string(b, n, "sun.rt.jvmCapabilities", out, sizeof out), -1);
}
END_TEST

START_TEST(this_process_is_not_a_jvm)
{
    char why[256];
    ck_assert_int_eq(np_attach_safe(getpid(), why, sizeof why), 0);
    ck_assert_str_eq(why, "it is not a JVM (no libjvm.so mapped)");
    ck_assert_int_eq(np_attach_safe(999999999, why, sizeof why), 0);
}
END_TEST

/* A stand-in attach listener on this process's /tmp/.java_pidN: takes one
 * request and answers `answer`. */
struct listener {
    int fd;
    const char *answer;
    char request[64];
    size_t got;
};

static void *serve(void *arg)
{
    struct listener *l = arg;
    int c = accept(l->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    ssize_t n;
    /* The request ends with its fifth NUL. */
    int nuls = 0;
    while (nuls < 5 && l->got < sizeof l->request &&
           (n = read(c, l->request + l->got, 1)) == 1)
        nuls += l->request[l->got++] == '\0';
    (void)!write(c, l->answer, strlen(l->answer));
    close(c);
    return NULL;
}

static void listen_at_own_socket(struct listener *l, char *path, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(path, len, "/tmp/.java_pid%d", (int)getpid());
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    unlink(path);
    l->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(l->fd, 0);
    ck_assert_int_eq(bind(l->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(l->fd, 1), 0);
}

/* The dump comes from the listener byte for byte (a name in modified
 * UTF-8 stays so), after a protocol-1 threaddump request; a refusal or no
 * listener is an error. */
START_TEST(thread_dump_from_the_attach_listener)
{
    char path[64], err[256];
    struct listener l = {.answer = "0\n\"lone-\xed\xa0\x80\" #20 prio=5 tid=0x1 nid=0x10 runnable\n"};
    listen_at_own_socket(&l, path, sizeof path);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, serve, &l), 0);
    char *out = NULL;
    size_t len = 0;
    int rc = np_attach_dump(getpid(), &out, &len, err, sizeof err);
    pthread_join(t, NULL);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_str_eq(out, "\"lone-\xed\xa0\x80\" #20 prio=5 tid=0x1 nid=0x10 runnable\n");
    ck_assert_uint_eq(len, strlen(out));
    ck_assert_uint_eq(l.got, 16);
    ck_assert_mem_eq(l.request, "1\0threaddump\0\0\0\0", 16);
    free(out);

    l.answer = "101\nunknown command\n";
    l.got = 0;
    ck_assert_int_eq(pthread_create(&t, NULL, serve, &l), 0);
    rc = np_attach_dump(getpid(), &out, &len, err, sizeof err);
    pthread_join(t, NULL);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err, "the JVM refused the thread dump (status 101)");
    close(l.fd);
    unlink(path);
    ck_assert_int_eq(np_attach_dump(getpid(), &out, &len, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no attach socket") != NULL, "%s", err);
}
END_TEST

Suite *attach_suite(void)
{
    Suite *s = suite_create("attach");
    TCase *tc = tcase_create("attach");
    tcase_add_test(tc, reads_the_capabilities_string);
    tcase_add_test(tc, refuses_what_is_not_performance_data);
    tcase_add_test(tc, this_process_is_not_a_jvm);
    tcase_add_test(tc, thread_dump_from_the_attach_listener);
    suite_add_tcase(s, tc);
    return s;
}
