/* np_options: parsing, validation, error messages, the help text. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_options.h"
#include "tests.h"

static int parse(const char *s, struct np_options *o, char *err, size_t len)
{
    memset(err, 'X', len); /* so an unwritten err shows */
    err[len - 1] = '\0';
    return np_options_parse(s, o, err, len);
}

START_TEST(defaults)
{
    const char *inputs[] = {NULL, ""};
    for (int i = 0; i < 2; i++) {
        struct np_options o;
        char err[512];
        ck_assert_int_eq(parse(inputs[i], &o, err, sizeof err), 0);
        ck_assert_str_eq(err, "");
        ck_assert_int_eq(o.group, 0);
        ck_assert_int_eq(o.groups, 0);
        ck_assert_int_eq(o.cpus, NP_CPUS_NODE);
        ck_assert_int_eq(o.mem, NP_MEM_PREFERRED);
        ck_assert_int_eq(o.log_level, NP_LOG_INFO);
        ck_assert_ptr_null(o.log_file);
        ck_assert(!o.dryrun && !o.strict && !o.help);
        ck_assert_str_eq(o.threads.text, NP_DEFAULT_THREADS);
        ck_assert_int_eq(o.threads.n, 2);
        ck_assert_str_eq(o.threads.patterns[0], "ForkJoinPool-*-worker-*");
        ck_assert_str_eq(o.threads.patterns[1], "ForkJoinPool.commonPool-worker-*");
        ck_assert_ptr_null(o.threads.patterns[2]);
        np_options_free(&o);
    }
}
END_TEST

START_TEST(domain_cpukind_mem_nodes)
{
    struct np_options o;
    char err[512];
    ck_assert_int_eq(parse(NULL, &o, err, sizeof err), 0);
    ck_assert_int_eq(o.domain, NP_DOMAIN_NODE);
    ck_assert_int_eq(o.cpukind, NP_CPUKIND_PERFORMANCE);
    ck_assert_ptr_null(o.mem_nodes);
    np_options_free(&o);
    ck_assert_int_eq(parse("domain=l3,cpukind=efficiency,mem=bind:0-1+4", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.domain, NP_DOMAIN_L3);
    ck_assert_int_eq(o.cpukind, NP_CPUKIND_EFFICIENCY);
    ck_assert_int_eq(o.mem, NP_MEM_BIND);
    ck_assert_str_eq(o.mem_nodes, "0-1,4");
    np_options_free(&o);
    ck_assert_int_eq(parse("domain=package,cpukind=2,mem=preferred:4", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.domain, NP_DOMAIN_PACKAGE);
    ck_assert_int_eq(o.cpukind, 2);
    ck_assert_int_eq(o.mem, NP_MEM_PREFERRED);
    ck_assert_str_eq(o.mem_nodes, "4");
    np_options_free(&o);
    ck_assert_int_eq(parse("", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.scope, NP_SCOPE_THREADS);
    ck_assert_int_eq(o.rescan_ms, NP_DEFAULT_RESCAN_MS);
    np_options_free(&o);
    ck_assert_int_eq(parse("group=auto,groups=4,scope=jvm,rescan=0", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.group, NP_GROUP_AUTO);
    ck_assert_int_eq(o.groups, 4);
    ck_assert_int_eq(o.scope, NP_SCOPE_JVM);
    ck_assert_int_eq(o.rescan_ms, 0);
    np_options_free(&o);
    ck_assert_int_eq(parse("rescan=10", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.rescan_ms, 10);
    ck_assert_int_eq(o.drift, NP_DRIFT_RESTORE);
    ck_assert_ptr_null(o.lock_dir);
    ck_assert(o.jfr); /* default on */
    np_options_free(&o);
    ck_assert_int_eq(parse("jfr=off", &o, err, sizeof err), 0);
    ck_assert(!o.jfr);
    np_options_free(&o);
    ck_assert_int_eq(parse("jfr=on", &o, err, sizeof err), 0);
    ck_assert(o.jfr);
    ck_assert(!o.topocache_off && o.topocache_dir == NULL); /* the default directory */
    np_options_free(&o);
    ck_assert_int_eq(parse("topocache=off", &o, err, sizeof err), 0);
    ck_assert(o.topocache_off);
    np_options_free(&o);
    ck_assert_int_eq(parse("topocache=/var/cache/numapin", &o, err, sizeof err), 0);
    ck_assert_str_eq(o.topocache_dir, "/var/cache/numapin");
    np_options_free(&o);
    ck_assert_int_eq(parse("drift=log,lockdir=/run/numapin-shared,group=auto", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.drift, NP_DRIFT_LOG);
    ck_assert_str_eq(o.lock_dir, "/run/numapin-shared");
    np_options_free(&o);
    ck_assert_int_eq(parse("drift=restore", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.drift, NP_DRIFT_RESTORE);
    np_options_free(&o);
    ck_assert_int_eq(parse("cpukind=any,mem=interleave", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.cpukind, NP_CPUKIND_ANY);
    ck_assert_ptr_null(o.mem_nodes);
    np_options_free(&o);
}
END_TEST

START_TEST(every_key)
{
    struct np_options o;
    char err[512];
    ck_assert_int_eq(parse("group=3,groups=8,threads=A*|B?x,cpus=core,mem=interleave,"
                           "log=trace:/tmp/np.log,dryrun,strict=false,help=true",
                           &o, err, sizeof err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(o.group, 3);
    ck_assert_int_eq(o.groups, 8);
    ck_assert_str_eq(o.threads.text, "A*|B?x");
    ck_assert_int_eq(o.threads.n, 2);
    ck_assert_str_eq(o.threads.patterns[0], "A*");
    ck_assert_str_eq(o.threads.patterns[1], "B?x");
    ck_assert_ptr_null(o.threads.patterns[2]);
    ck_assert_int_eq(o.cpus, NP_CPUS_CORE);
    ck_assert_int_eq(o.mem, NP_MEM_INTERLEAVE);
    ck_assert_int_eq(o.log_level, NP_LOG_TRACE);
    ck_assert_str_eq(o.log_file, "/tmp/np.log");
    ck_assert(o.dryrun);
    ck_assert(!o.strict);
    ck_assert(o.help);
    np_options_free(&o);

    /* Boundaries of the numbers. */
    ck_assert_int_eq(parse("group=4095,groups=4096", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.group, 4095);
    ck_assert_int_eq(o.groups, 4096);
    np_options_free(&o);
    ck_assert_int_eq(parse("groups=1,group=0", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.groups, 1);
    np_options_free(&o);
    /* group without groups: range checked later against the node count. */
    ck_assert_int_eq(parse("group=7", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.group, 7);
    ck_assert_int_eq(o.groups, 0);
    np_options_free(&o);
}
END_TEST

START_TEST(every_enum_value)
{
    static const char *const cpus[] = {"node", "core", "pu"};
    static const char *const mem[] = {"preferred", "bind", "interleave", "local", "none"};
    static const char *const levels[] = {"off", "error", "warning", "info", "debug", "trace"};
    struct np_options o;
    char err[512], s[64];
    for (int i = 0; i < 3; i++) {
        snprintf(s, sizeof s, "cpus=%s", cpus[i]);
        ck_assert_int_eq(parse(s, &o, err, sizeof err), 0);
        ck_assert_int_eq(o.cpus, i);
        ck_assert_str_eq(np_cpus_mode_name(o.cpus), cpus[i]);
        np_options_free(&o);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(s, sizeof s, "mem=%s", mem[i]);
        ck_assert_int_eq(parse(s, &o, err, sizeof err), 0);
        ck_assert_int_eq(o.mem, i);
        ck_assert_str_eq(np_mem_mode_name(o.mem), mem[i]);
        np_options_free(&o);
    }
    for (int i = 0; i < 6; i++) {
        snprintf(s, sizeof s, "log=%s", levels[i]);
        ck_assert_int_eq(parse(s, &o, err, sizeof err), 0);
        ck_assert_int_eq(o.log_level, i);
        ck_assert_ptr_null(o.log_file);
        np_options_free(&o);
    }
}
END_TEST

START_TEST(flags)
{
    struct {
        const char *s;
        int dryrun, strict, help;
    } cases[] = {
        {"dryrun", 1, 0, 0},
        {"dryrun=true", 1, 0, 0},
        {"dryrun=false", 0, 0, 0},
        {"strict", 0, 1, 0},
        {"strict=true,dryrun=false", 0, 1, 0},
        {"help", 0, 0, 1},
        {"help=false,strict=false,dryrun", 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct np_options o;
        char err[512];
        ck_assert_msg(parse(cases[i].s, &o, err, sizeof err) == 0, "%s: %s", cases[i].s, err);
        ck_assert_msg(o.dryrun == cases[i].dryrun && o.strict == cases[i].strict &&
                          o.help == cases[i].help,
                      "%s: dryrun=%d strict=%d help=%d", cases[i].s, o.dryrun, o.strict, o.help);
        np_options_free(&o);
    }
}
END_TEST

START_TEST(log_level_and_file)
{
    struct np_options o;
    char err[512];
    ck_assert_int_eq(parse("log=debug:/path", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.log_level, NP_LOG_DEBUG);
    ck_assert_str_eq(o.log_file, "/path");
    np_options_free(&o);
    /* Only the first colon separates: the rest is the file name. */
    ck_assert_int_eq(parse("log=warning:/a:b", &o, err, sizeof err), 0);
    ck_assert_int_eq(o.log_level, NP_LOG_WARNING);
    ck_assert_str_eq(o.log_file, "/a:b");
    np_options_free(&o);
    ck_assert_ptr_null(o.log_file); /* np_options_free clears */
    ck_assert_int_eq(parse("log=info:/tmp/g1-%p.log,report=/tmp/g1-%p-100%%.json", &o, err,
                           sizeof err), 0);
    ck_assert_str_eq(o.log_file, "/tmp/g1-%p.log"); /* expanded when opened */
    ck_assert_str_eq(o.report_file, "/tmp/g1-%p-100%%.json");
    np_options_free(&o);
    ck_assert_ptr_null(o.report_file);
}
END_TEST

/* Every bad option string: -1, and one message naming the option and its
 * valid values. */
static const struct {
    const char *s;
    const char *names;   /* the option, as the message quotes it */
    const char *valid;   /* part of the valid-values text */
} bad[] = {
    {"bogus=1", "'bogus'", "valid options are group, groups, lockdir, threads, scope, rescan, drift, domain, cpus, cpukind, mem, log, logsync, report, jfr, topocache, dryrun, strict, help"},
    {"Group=1", "'Group'", "valid options are group, groups"},
    {"group=1,,mem=bind", "empty option", "valid options are group, groups, lockdir, threads, scope, rescan, drift, domain, cpus, cpukind, mem, log, logsync, report, jfr, topocache, dryrun, strict, help"},
    {",", "empty option", "valid options are group"},
    {"group=1,", "empty option", "valid options are group"},
    {"group=-1", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=abc", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=+1", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group= 1", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=1x", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=99999999999999999999", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"group=4096", "'group'", "valid values are auto, or a group index from 0 to 4095"},
    {"groups=0", "'groups'", "valid values are a group count from 1 to 4096"},
    {"groups=4097", "'groups'", "valid values are a group count from 1 to 4096"},
    {"groups=", "'groups'", "valid values are a group count from 1 to 4096"},
    {"group=2,groups=2", "'group=2'", "groups=2: valid values are 0 to 1"},
    {"groups=3,group=5", "'group=5'", "groups=3: valid values are 0 to 2"},
    {"cpus=bogus", "'cpus'", "valid values are node, core, pu"},
    {"cpus=", "'cpus'", "valid values are node, core, pu"},
    {"cpus=Node", "'cpus'", "valid values are node, core, pu"},
    {"mem=bogus", "'mem'", "valid values are preferred, bind, interleave, local, none, balancing"},
    {"mem=bind:", "'mem'", "followed by :NODES"},
    {"mem=bind:x", "'mem'", "followed by :NODES"},
    {"mem=bind:-1", "'mem'", "followed by :NODES"},
    {"mem=bind:4096", "'mem'", "followed by :NODES"},
    {"mem=local:0", "'mem'", "except for local and none"},
    {"mem=none:1", "'mem'", "except for local and none"},
    {"mem=bind:1,2", "'2'", "valid options are"},
    {"mem=bind:1++2", "'mem'", "followed by :NODES"},
    {"scope=process", "'scope'", "valid values are threads, jvm"},
    {"rescan=5", "'rescan'", "0 (never), or a period in milliseconds from 10 to 3600000"},
    {"rescan=-1", "'rescan'", "0 (never), or a period in milliseconds from 10 to 3600000"},
    {"rescan=3600001", "'rescan'", "0 (never), or a period in milliseconds from 10 to 3600000"},
    {"drift=off", "'drift'", "valid values are restore, log"},
    {"drift=", "'drift'", "valid values are restore, log"},
    {"drift=Restore", "'drift'", "valid values are restore, log"},
    {"lockdir=", "'lockdir'", "an absolute path"},
    {"lockdir=run/numapin", "'lockdir'", "an absolute path"},
    {"lockdir=/a,lockdir=/b", "'lockdir' is given more than once", "give each option once"},
    {"group=Auto", "'group'", "valid values are auto, or a group index"},
    {"domain=socket", "'domain'", "valid values are node, package, l3"},
    {"cpukind=big", "'cpukind'", "performance, efficiency, any, or a kind number"},
    {"cpukind=-1", "'cpukind'", "performance, efficiency, any, or a kind number"},
    {"log=loud", "'log'", "off, error, warning, info, debug, trace"},
    {"log=info:", "'log'", "off, error, warning, info, debug, trace"},
    {"log=:file", "'log'", "off, error, warning, info, debug, trace"},
    {"log=", "'log'", "off, error, warning, info, debug, trace"},
    {"log=info:/tmp/a-%d.log", "'log'", "%p stands for the process id"},
    {"report=", "'report'", "a path, in which %p stands for the process id"},
    {"jfr=", "'jfr'", "valid values are on, off"},
    {"jfr", "'jfr'", "valid values are on, off"},
    {"jfr=true", "'jfr'", "valid values are on, off"},
    {"jfr=ON", "'jfr'", "valid values are on, off"},
    {"topocache=on", "'topocache'", "valid values are off, or an absolute path"},
    {"topocache=cache", "'topocache'", "valid values are off, or an absolute path"},
    {"topocache=", "'topocache'", "valid values are off, or an absolute path"},
    {"jfr=on,jfr=off", "'jfr'", "give each option once"},
    {"report=/tmp/r-%q.json", "'report'", "%p stands for the process id and %% for '%'"},
    {"report=/tmp/r-%", "'report'", "%p stands for the process id"},
    {"threads=", "'threads'", "shell globs separated by '|'"},
    {"threads=a||b", "'threads'", "shell globs separated by '|'"},
    {"threads=|a", "'threads'", "shell globs separated by '|'"},
    {"threads=a|", "'threads'", "shell globs separated by '|'"},
    {"threads=|", "'threads'", "shell globs separated by '|'"},
    {"dryrun=maybe", "'dryrun'", "valid values are no value, true, false, yes or no"},
    {"strict=1", "'strict'", "valid values are no value, true, false, yes or no"},
    {"help=", "'help'", "valid values are no value, true, false, yes or no"},
};

START_TEST(errors)
{
    struct np_options o;
    char err[512];
    const char *s = bad[_i].s;
    ck_assert_msg(parse(s, &o, err, sizeof err) == -1, "'%s' was accepted", s);
    ck_assert_msg(strstr(err, bad[_i].names) != NULL, "'%s': message \"%s\" does not name %s", s,
                  err, bad[_i].names);
    ck_assert_msg(strstr(err, bad[_i].valid) != NULL,
                  "'%s': message \"%s\" does not give the valid values \"%s\"", s, err,
                  bad[_i].valid);
    ck_assert_msg(strchr(err, '\n') == NULL, "'%s': message is not one line: %s", s, err);
    np_options_free(&o);
}
END_TEST

START_TEST(error_quotes_bad_value)
{
    struct np_options o;
    char err[512];
    ck_assert_int_eq(parse("mem=bogus", &o, err, sizeof err), -1);
    ck_assert_str_eq(err, "invalid value 'bogus' for option 'mem': valid values are preferred, "
                          "bind, interleave, local, none, balancing, optionally followed by :NODES "
                          "(e.g. bind:0-1+4) except for local and none");
    np_options_free(&o);
    ck_assert_int_eq(parse("cpus=", &o, err, sizeof err), -1);
    ck_assert_str_eq(err, "option 'cpus' needs a value: valid values are node, core, pu");
    np_options_free(&o);
    /* A long bad value is cut short in the message. */
    char s[400];
    snprintf(s, sizeof s, "cpus=%0300d", 7);
    ck_assert_int_eq(parse(s, &o, err, sizeof err), -1);
    ck_assert_msg(strlen(err) < 250 && strstr(err, "...' for option 'cpus'") != NULL, "%s", err);
    np_options_free(&o);
    /* A small err buffer still gets a terminated message. */
    char small[16];
    ck_assert_int_eq(parse("cpus=bogus", &o, small, sizeof small), -1);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
    np_options_free(&o);
}
END_TEST

START_TEST(duplicate_key)
{
    const char *dups[] = {"mem=bind,mem=local", "group=1,group=1", "dryrun,dryrun=false",
                          "log=info,log=debug"};
    const char *names[] = {"'mem'", "'group'", "'dryrun'", "'log'"};
    for (int i = 0; i < 4; i++) {
        struct np_options o;
        char err[512];
        ck_assert_msg(parse(dups[i], &o, err, sizeof err) == -1, "%s accepted", dups[i]);
        ck_assert_msg(strstr(err, names[i]) && strstr(err, "more than once"), "%s: %s", dups[i],
                      err);
        np_options_free(&o);
    }
}
END_TEST

START_TEST(too_long)
{
    struct np_options o;
    char err[512];
    /* Exactly NP_MAX_OPTIONS_LEN bytes: accepted. */
    char *s = malloc(NP_MAX_OPTIONS_LEN + 2);
    ck_assert_ptr_nonnull(s);
    memset(s, 'a', NP_MAX_OPTIONS_LEN + 1);
    memcpy(s, "threads=", 8);
    s[NP_MAX_OPTIONS_LEN] = '\0';
    ck_assert_int_eq(parse(s, &o, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(o.threads.text), NP_MAX_OPTIONS_LEN - 8);
    np_options_free(&o);
    /* One more: refused, with the limit in the message. */
    s[NP_MAX_OPTIONS_LEN] = 'a';
    s[NP_MAX_OPTIONS_LEN + 1] = '\0';
    ck_assert_int_eq(parse(s, &o, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "8193") && strstr(err, "8192"), "%s", err);
    np_options_free(&o);
    free(s);
}
END_TEST

START_TEST(log_applied_despite_error)
{
    struct np_options o;
    char err[512];
    /* log= before and after the bad option. */
    ck_assert_int_eq(parse("log=debug:/tmp/x.log,cpus=bogus", &o, err, sizeof err), -1);
    ck_assert_int_eq(o.log_level, NP_LOG_DEBUG);
    ck_assert_str_eq(o.log_file, "/tmp/x.log");
    ck_assert_ptr_nonnull(strstr(err, "'cpus'"));
    np_options_free(&o);
    ck_assert_int_eq(parse("bogus,log=warning:/tmp/y.log", &o, err, sizeof err), -1);
    ck_assert_int_eq(o.log_level, NP_LOG_WARNING);
    ck_assert_str_eq(o.log_file, "/tmp/y.log");
    ck_assert_ptr_nonnull(strstr(err, "'bogus'"));
    np_options_free(&o);
    /* The first error is the one reported. */
    ck_assert_int_eq(parse("mem=x,cpus=y,log=error", &o, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "'mem'"));
    ck_assert_ptr_null(strstr(err, "'cpus'"));
    ck_assert_int_eq(o.log_level, NP_LOG_ERROR);
    np_options_free(&o);
}
END_TEST

START_TEST(help_text)
{
    const char *h = np_options_help();
    const char *keys[] = {"group=N", "groups=N", "threads=", "cpus=node|core|pu",
                          "mem=preferred|bind|interleave|local|none|balancing", "log=LEVEL[:FILE]",
                          "report=FILE", "jfr=on|off", "dryrun", "strict", "help", NP_DEFAULT_THREADS};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        ck_assert_msg(strstr(h, keys[i]) != NULL, "help lacks %s", keys[i]);
}
END_TEST

/* Flags take what the plan line prints for them, as well as true/false. */
START_TEST(flags_take_yes_and_no)
{
    struct np_options o;
    char err[512];
    ck_assert_int_eq(np_options_parse("dryrun=no,strict=yes", &o, err, sizeof err), 0);
    ck_assert(!o.dryrun && o.strict);
    np_options_free(&o);
    ck_assert_int_eq(np_options_parse("dryrun=yes,strict=no,help=false", &o, err, sizeof err), 0);
    ck_assert(o.dryrun && !o.strict && !o.help);
    np_options_free(&o);
}
END_TEST

Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, flags_take_yes_and_no);
    tcase_add_test(tc, every_key);
    tcase_add_test(tc, domain_cpukind_mem_nodes);
    tcase_add_test(tc, every_enum_value);
    tcase_add_test(tc, flags);
    tcase_add_test(tc, log_level_and_file);
    tcase_add_loop_test(tc, errors, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, error_quotes_bad_value);
    tcase_add_test(tc, duplicate_key);
    tcase_add_test(tc, too_long);
    tcase_add_test(tc, log_applied_despite_error);
    tcase_add_test(tc, help_text);
    suite_add_tcase(s, tc);
    return s;
}
