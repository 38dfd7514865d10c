/* np_hotspot (agent/hotspot.c): HotSpot's flags and thread ids, read
 * through the tables libjvm.so exports for its serviceability agent.
 *
 * This binary exports tables of its own under HotSpot's names and with
 * HotSpot's layout (VMStructEntry, VMTypeEntry and the offset and stride
 * variables of vmStructs.cpp), describing fake JVMFlag, JavaThread and
 * OSThread objects; np_hotspot_init(NULL) finds them in the global
 * namespace, as it finds libjvm.so's in a JVM.  The Makefile links it with
 * --export-dynamic-symbol=gHotSpotVM*, so that these are dynamic symbols.
 * Each test builds the tables afresh (setup) and may spoil them before
 * np_hotspot_init. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hotspot.h"
#include "tests.h"

#define EXPORTED __attribute__((visibility("default")))

/* HotSpot's layouts (src/hotspot/share/runtime/vmStructs.hpp). */
typedef struct {
    const char *typeName;
    const char *fieldName;
    const char *typeString;
    int32_t isStatic;
    uint64_t offset;
    void *address;
} VMStructEntry;

typedef struct {
    const char *typeName;
    const char *superclassName;
    int32_t isOopType;
    int32_t isIntegerType;
    int32_t isUnsigned;
    uint64_t size;
} VMTypeEntry;

/* The objects described: JVMFlag's field order differs from HotSpot's on
 * purpose, since only the offsets in the tables may count. */
struct fake_flag {
    int type;
    void *addr;
    const char *name;
    int flags;
};

struct fake_osthread {
    char before[12];
    pid_t thread_id;
};

struct fake_thread {
    char before[40];
    struct fake_osthread *osthread;
};

static bool use_numa;
static bool always_pretouch;
static uint32_t conc_gc_threads;
static int32_t active_processor_count;
static int64_t max_heap_size;
static int64_t numa_interleave_granularity;
static const char *allocate_heap_at;
static struct fake_flag flag_array[7];
static struct fake_flag *flags_pointer = flag_array;
static size_t num_flags;

static VMStructEntry structs[16];
static VMTypeEntry types[8];

EXPORTED VMStructEntry *gHotSpotVMStructs;
EXPORTED uint64_t gHotSpotVMStructEntryTypeNameOffset = offsetof(VMStructEntry, typeName);
EXPORTED uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(VMStructEntry, fieldName);
EXPORTED uint64_t gHotSpotVMStructEntryTypeStringOffset = offsetof(VMStructEntry, typeString);
EXPORTED uint64_t gHotSpotVMStructEntryIsStaticOffset = offsetof(VMStructEntry, isStatic);
EXPORTED uint64_t gHotSpotVMStructEntryOffsetOffset = offsetof(VMStructEntry, offset);
EXPORTED uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(VMStructEntry, address);
EXPORTED uint64_t gHotSpotVMStructEntryArrayStride = sizeof(VMStructEntry);
EXPORTED VMTypeEntry *gHotSpotVMTypes;
EXPORTED uint64_t gHotSpotVMTypeEntryTypeNameOffset = offsetof(VMTypeEntry, typeName);
EXPORTED uint64_t gHotSpotVMTypeEntrySuperclassNameOffset = offsetof(VMTypeEntry, superclassName);
EXPORTED uint64_t gHotSpotVMTypeEntryIsOopTypeOffset = offsetof(VMTypeEntry, isOopType);
EXPORTED uint64_t gHotSpotVMTypeEntryIsIntegerTypeOffset = offsetof(VMTypeEntry, isIntegerType);
EXPORTED uint64_t gHotSpotVMTypeEntryIsUnsignedOffset = offsetof(VMTypeEntry, isUnsigned);
EXPORTED uint64_t gHotSpotVMTypeEntrySizeOffset = offsetof(VMTypeEntry, size);
EXPORTED uint64_t gHotSpotVMTypeEntryArrayStride = sizeof(VMTypeEntry);

/* Which JDK's names the tables use. */
enum names { JDK17, JDK8, JDK21 };

static int nstructs;

static void add_struct(const char *type, const char *field, int is_static, uint64_t offset,
                       void *address)
{
    ck_assert_int_lt(nstructs, 15);
    structs[nstructs++] = (VMStructEntry){type, field, "", is_static, offset, address};
}

/* Tables as the given JDK's libjvm.so has them (the parts numapin reads,
 * among others), ending in an entry of NULL names. */
static void build(enum names jdk)
{
    /* JDK 8 calls JVMFlag "Flag"; JDK 21 has _osthread in Thread. */
    const char *flag_type = jdk == JDK8 ? "Flag" : "JVMFlag";
    const char *thread_type = jdk == JDK21 ? "Thread" : "JavaThread";
    use_numa = true;
    always_pretouch = false;
    conc_gc_threads = 3;
    active_processor_count = -1;
    max_heap_size = INT64_C(1) << 34;
    numa_interleave_granularity = INT64_C(2097152);
    allocate_heap_at = "/mnt/pmem";
    struct fake_flag f[] = {
        {0, &use_numa, "UseNUMA", 0},
        {0, &always_pretouch, "AlwaysPreTouch", 0},
        {1, &conc_gc_threads, "ConcGCThreads", 0},
        {2, &active_processor_count, "ActiveProcessorCount", 0},
        {3, &max_heap_size, "MaxHeapSize", 0},
        {4, &numa_interleave_granularity, "NUMAInterleaveGranularity", 0},
        {5, &allocate_heap_at, "AllocateHeapAt", 0},
    };
    memcpy(flag_array, f, sizeof f);
    flags_pointer = flag_array;
    num_flags = sizeof f / sizeof *f;
    memset(structs, 0, sizeof structs);
    nstructs = 0;
    add_struct("Klass", "_name", 0, 16, NULL);
    add_struct(thread_type, "_osthread", 0, offsetof(struct fake_thread, osthread), NULL);
    add_struct(flag_type, "_type", 0, offsetof(struct fake_flag, type), NULL);
    add_struct(flag_type, "_name", 0, offsetof(struct fake_flag, name), NULL);
    add_struct(flag_type, "_addr", 0, offsetof(struct fake_flag, addr), NULL);
    add_struct(flag_type, "flags", 1, 0, &flags_pointer);
    add_struct(flag_type, "numFlags", 1, 0, &num_flags);
    add_struct("OSThread", "_thread_id", 0, offsetof(struct fake_osthread, thread_id), NULL);
    add_struct("Universe", "_collectedHeap", 1, 0, NULL);
    memset(types, 0, sizeof types);
    types[0] = (VMTypeEntry){"Klass", NULL, 0, 0, 0, 64};
    types[1] = (VMTypeEntry){flag_type, NULL, 0, 0, 0, sizeof(struct fake_flag)};
    types[2] = (VMTypeEntry){"OSThread", NULL, 0, 0, 0, sizeof(struct fake_osthread)};
    gHotSpotVMStructs = structs;
    gHotSpotVMTypes = types;
}

static void setup(void)
{
    build(JDK17);
}

/* Removes the struct entries of `type`.`field` (NULL: every field). */
static void drop(const char *type, const char *field)
{
    int k = 0;
    for (int i = 0; i < nstructs; i++)
        if (strcmp(structs[i].typeName, type) != 0 ||
            (field != NULL && strcmp(structs[i].fieldName, field) != 0))
            structs[k++] = structs[i];
    memset(&structs[k], 0, (size_t)(nstructs - k) * sizeof *structs);
    nstructs = k;
}

START_TEST(flags_of_every_type_are_read)
{
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    bool b = false;
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
    ck_assert(b);
    b = true;
    ck_assert_int_eq(np_hotspot_bool("AlwaysPreTouch", &b), 0);
    ck_assert(!b);
    uint32_t u = 0;
    ck_assert_int_eq(np_hotspot_uint("ConcGCThreads", &u), 0);
    ck_assert_uint_eq(u, 3);
    int32_t i = 0;
    ck_assert_int_eq(np_hotspot_int("ActiveProcessorCount", &i), 0);
    ck_assert_int_eq(i, -1);
    int64_t x = 0;
    ck_assert_int_eq(np_hotspot_intx("MaxHeapSize", &x), 0);
    ck_assert(x == INT64_C(1) << 34);
    ck_assert_int_eq(np_hotspot_intx("NUMAInterleaveGranularity", &x), 0);
    ck_assert(x == 2097152);
    const char *s = NULL;
    ck_assert_int_eq(np_hotspot_ccstr("AllocateHeapAt", &s), 0);
    ck_assert_str_eq(s, "/mnt/pmem");
    ck_assert_int_eq(np_hotspot_ccstr("HeapDumpPath", &s), -1);
}
END_TEST

/* A flag is read where the JVM keeps it, when asked: what ergonomics set
 * after start-up is what is read. */
START_TEST(flags_are_read_when_asked)
{
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    use_numa = false;
    active_processor_count = 12;
    bool b = true;
    int32_t i = 0;
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(np_hotspot_int("ActiveProcessorCount", &i), 0);
    ck_assert_int_eq(i, 12);
    allocate_heap_at = NULL; /* a ccstr flag not set */
    const char *s = "";
    ck_assert_int_eq(np_hotspot_ccstr("AllocateHeapAt", &s), 0);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(missing_flag_reads_as_minus_one)
{
    /* A flag without a name (HotSpot ends its array with one) is skipped. */
    flag_array[1].name = NULL;
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    bool b = true;
    uint32_t u = 7;
    int32_t i = 7;
    int64_t x = 7;
    ck_assert_int_eq(np_hotspot_bool("UseNUMAInterleaving", &b), -1);
    ck_assert_int_eq(np_hotspot_bool("AlwaysPreTouch", &b), -1);
    ck_assert_int_eq(np_hotspot_uint("usenuma", &u), -1);
    ck_assert_int_eq(np_hotspot_int("", &i), -1);
    ck_assert_int_eq(np_hotspot_intx("MaxHeap", &x), -1);
    ck_assert(b && u == 7 && i == 7 && x == 7);
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
    /* Only the first num_flags entries are flags. */
    num_flags = 1;
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    ck_assert_int_eq(np_hotspot_uint("ConcGCThreads", &u), -1);
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
}
END_TEST

/* Not HotSpot (no tables, or tables without what numapin needs): init
 * fails and everything reads as unknown. */
START_TEST(missing_tables_read_as_unknown)
{
    gHotSpotVMStructs = NULL;
    ck_assert_int_eq(np_hotspot_init(NULL), -1);
    bool b;
    uint32_t u;
    int32_t i;
    int64_t x;
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), -1);
    ck_assert_int_eq(np_hotspot_uint("ConcGCThreads", &u), -1);
    ck_assert_int_eq(np_hotspot_int("ActiveProcessorCount", &i), -1);
    ck_assert_int_eq(np_hotspot_intx("MaxHeapSize", &x), -1);
    struct fake_osthread os = {.thread_id = 1234};
    struct fake_thread jt = {.osthread = &os};
    ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), -1);
    /* A library that is not libjvm.so: its own tables are looked for. */
    build(JDK17);
    ck_assert_int_eq(np_hotspot_init((const void *)&strlen), -1);
}
END_TEST

START_TEST(incomplete_tables_are_refused)
{
    static const struct {
        const char *type, *field;
    } parts[] = {{"JVMFlag", "_name"}, {"JVMFlag", "_addr"}, {"JVMFlag", "flags"},
                 {"JVMFlag", "numFlags"}, {"JVMFlag", NULL}};
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        build(JDK17);
        drop(parts[k].type, parts[k].field);
        ck_assert_msg(np_hotspot_init(NULL) == -1, "accepted without %s.%s", parts[k].type,
                      parts[k].field ? parts[k].field : "*");
    }
    build(JDK17);
    types[1].typeName = "JVMFlagX"; /* no size of JVMFlag */
    ck_assert_int_eq(np_hotspot_init(NULL), -1);
    build(JDK17);
    flags_pointer = NULL; /* the flag array is not there */
    ck_assert_int_eq(np_hotspot_init(NULL), -1);
    build(JDK17);
    gHotSpotVMTypeEntryArrayStride = 0;
    ck_assert_int_eq(np_hotspot_init(NULL), -1);
    gHotSpotVMTypeEntryArrayStride = sizeof(VMTypeEntry);
    /* The offsets, not the names' order, are followed: the same tables
     * with the entries reversed. */
    build(JDK17);
    for (int a = 0, z = nstructs - 1; a < z; a++, z--) {
        VMStructEntry e = structs[a];
        structs[a] = structs[z];
        structs[z] = e;
    }
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    uint32_t u = 0;
    ck_assert_int_eq(np_hotspot_uint("ConcGCThreads", &u), 0);
    ck_assert_uint_eq(u, 3);
}
END_TEST

/* JDK 8 names JVMFlag "Flag". */
START_TEST(flags_of_older_jdks_are_read)
{
    build(JDK8);
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    bool b = false;
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
    ck_assert(b);
}
END_TEST

/* A JavaThread's OS thread id, through _osthread (JavaThread's in older
 * JDKs, Thread's in newer) and OSThread::_thread_id. */
START_TEST(os_tid_is_read_through_the_osthread)
{
    struct fake_osthread os = {.thread_id = 4321};
    struct fake_thread jt = {.osthread = &os};
    for (int jdk = JDK17; jdk <= JDK21; jdk++) {
        build((enum names)jdk);
        ck_assert_int_eq(np_hotspot_init(NULL), 0);
        ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), 4321);
    }
    ck_assert_int_eq(np_hotspot_os_tid(0), -1);
    jt.osthread = NULL; /* not started, or gone */
    ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), -1);
    jt.osthread = &os;
    os.thread_id = 0;
    ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), -1);
}
END_TEST

/* Tables without the thread entries: flags still read, thread ids are
 * unknown. */
START_TEST(os_tid_without_thread_entries_is_unknown)
{
    struct fake_osthread os = {.thread_id = 99};
    struct fake_thread jt = {.osthread = &os};
    drop("OSThread", NULL);
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), -1);
    bool b = false;
    ck_assert_int_eq(np_hotspot_bool("UseNUMA", &b), 0);
    ck_assert(b);
    build(JDK17);
    drop("JavaThread", "_osthread");
    ck_assert_int_eq(np_hotspot_init(NULL), 0);
    ck_assert_int_eq(np_hotspot_os_tid((uintptr_t)&jt), -1);
}
END_TEST

Suite *hotspot_suite(void)
{
    Suite *s = suite_create("hotspot");
    TCase *tc = tcase_create("tables");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, flags_of_every_type_are_read);
    tcase_add_test(tc, flags_are_read_when_asked);
    tcase_add_test(tc, missing_flag_reads_as_minus_one);
    tcase_add_test(tc, missing_tables_read_as_unknown);
    tcase_add_test(tc, incomplete_tables_are_refused);
    tcase_add_test(tc, flags_of_older_jdks_are_read);
    tcase_add_test(tc, os_tid_is_read_through_the_osthread);
    tcase_add_test(tc, os_tid_without_thread_entries_is_unknown);
    suite_add_tcase(s, tc);
    return s;
}
