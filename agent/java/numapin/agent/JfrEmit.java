package numapin.agent;

import jdk.jfr.Event;
import jdk.jfr.EventFactory;

/**
 * Commits numapin's per-thread event in one call from the agent: the agent
 * (agent/jfr.c) defines this class from bytes built into libnumapin.so and
 * calls {@link #placement} on its own thread ("numapin jfr") for the
 * placements threads queued at their start: one JNI call where building
 * the event field by field from C takes about twenty. The event type is
 * the agent's, made with {@link EventFactory}; the indexes are its fields'
 * (placement_fields in agent/jfr.c), a null value is left unset.
 */
final class JfrEmit {
    private JfrEmit() {}

    static void placement(EventFactory type, Thread thread, String threadName, long osThreadId,
            int group, String nodes, String cpus, String memoryPolicy, String memoryError,
            String how, boolean verified, boolean earlier) {
        Event e = type.newEvent();
        if (!e.shouldCommit()) {
            return;
        }
        put(e, 0, thread);
        put(e, 1, threadName);
        e.set(2, osThreadId);
        e.set(3, group);
        put(e, 4, nodes);
        put(e, 5, cpus);
        put(e, 6, memoryPolicy);
        put(e, 7, memoryError);
        put(e, 8, how);
        e.set(9, verified);
        e.set(10, earlier);
        e.commit();
    }

    private static void put(Event e, int index, Object value) {
        if (value != null) {
            e.set(index, value);
        }
    }

    /** The hook of the periodic NodeMemory: wakes the agent's thread, which emits it. */
    static Runnable ticking() {
        return JfrEmit::tick;
    }

    /** Registered by the agent (emit_tick in agent/jfr.c). */
    private static native void tick();

    /**
     * The hook of numapin.Placement, whose period is the end of each chunk:
     * commits the placements still queued, on the thread that ends the
     * chunk, so that a recording that stops holds them all.
     */
    static Runnable flushing() {
        return JfrEmit::flush;
    }

    /** Registered by the agent (emit_flush in agent/jfr.c). */
    private static native void flush();
}
