package instr;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Exact call and allocation counts from the instr agent, for assertions in test suites.
 *
 * <pre>
 * long before = Counts.calls("com.example.Parser", "parse");
 * parser.parse(input);
 * assertEquals(3, Counts.calls("com.example.Parser", "parse") - before);
 *
 * Counts.Snapshot s = Counts.snapshot();
 * cache.get(key);
 * assertEquals(1, s.calls("com.example.Cache", "load"));
 * assertEquals(0, s.allocations(Entry.class));
 * </pre>
 *
 * The JVM must run with the agent, {@code -agentpath:/path/to/libinstr.so=rules=RULES.yaml}, and the rules must
 * select what is asked for: the {@code methods} probe and the method for {@link #calls}, the {@code objects} (or
 * {@code arrays}) probe for {@link #allocations}. Without the agent every method throws an
 * {@link IllegalStateException} that says so. Counts are totals over all threads since the VM started or since
 * {@link #reset()}.
 */
public final class Counts {
    private Counts() {}

    private static final String HOW = "run the JVM with -agentpath:/path/to/libinstr.so=rules=RULES.yaml "
            + "(see docs/API.md)";

    private static final class Agent {
        final MethodHandle calls, callCounts, methodIds, classSelected, siteIds, resetCalls, mode;
        final MethodHandle classSlotOf, instanceCounts, siteCounts, resetAllocations, heapDump;

        Agent() throws ReflectiveOperationException {
            MethodHandles.Lookup l = MethodHandles.publicLookup();
            Class<?> c = Class.forName("java.lang.HeapProxyCalls", false, null);
            Class<?> h = Class.forName("java.lang.HeapProxy", false, null);
            calls = l.findStatic(c, "calls", MethodType.methodType(long.class, String.class, String.class, String.class));
            callCounts = l.findStatic(c, "callCounts", MethodType.methodType(long[].class));
            methodIds = l.findStatic(c, "methodIds", MethodType.methodType(int[].class, String.class, String.class, String.class));
            classSelected = l.findStatic(c, "classSelected", MethodType.methodType(boolean.class, String.class));
            siteIds = l.findStatic(c, "siteIds", MethodType.methodType(int[].class, String.class, String.class, int.class));
            resetCalls = l.findStatic(c, "reset", MethodType.methodType(void.class));
            mode = l.findStatic(c, "mode", MethodType.methodType(String.class));
            classSlotOf = l.findStatic(h, "classSlotOf", MethodType.methodType(int.class, Class.class));
            instanceCounts = l.findStatic(h, "instanceCounts", MethodType.methodType(long[].class));
            siteCounts = l.findStatic(h, "siteCounts", MethodType.methodType(long[].class));
            resetAllocations = l.findStatic(h, "resetAllocations", MethodType.methodType(void.class));
            heapDump = l.findStatic(h, "heapDump", MethodType.methodType(String.class));
        }
    }

    private static volatile Agent agent;

    private static Agent agent() {
        Agent a = agent;
        if (a != null) return a;
        try {
            a = new Agent();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IllegalStateException("instr agent not loaded, or its rules select no probe: " + HOW);
        }
        return agent = a;
    }

    /**
     * Writes an HPROF heap dump of the heap as it is now (PREFIX.hprof; instances the agent tagged point at
     * their allocation site's stack trace) and returns its path.
     *
     * @throws IllegalStateException if the agent is not loaded or the dump could not be written (the agent
     *     says why on stderr)
     */
    public static String heapDump() {
        String path = (String) invoke(agent().heapDump);
        if (path == null) throw new IllegalStateException("instr: the heap dump was not written (see stderr)");
        return path;
    }

    /** Whether the JVM runs with the instr agent. */
    public static boolean agentLoaded() {
        try {
            agent();
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** Calls so far of every overload of {@code className.method} (Java class name, e.g. "com.example.Foo$Inner"). */
    public static long calls(String className, String method) {
        return calls(className, method, null);
    }

    /** Calls so far of {@code className.method} with the JVM descriptor {@code descriptor} (e.g. "(I)I"); null: any. */
    public static long calls(String className, String method, String descriptor) {
        return sum(callCounts(), methodIds(className, method, descriptor));
    }

    /** Objects (or arrays) of exactly this class allocated so far, in any thread. */
    public static long allocations(Class<?> type) {
        return allocations(instanceCounts(), type);
    }

    /**
     * Arrays allocated so far at the array sites of {@code className.method} on source line {@code line} (any line
     * when negative). Objects have no static site; count them by class with {@link #allocations(Class)}.
     */
    public static long allocations(String className, String method, int line) {
        int[] ids = (int[]) invoke(agent().siteIds, className, method, line);
        if (ids.length == 0) {
            throw new IllegalArgumentException("no instrumented array allocation site in " + className + "." + method
                    + (line >= 0 ? " at line " + line : "") + ": its class is not loaded yet, or the rules do not "
                    + "select its arrays");
        }
        return sum(siteCounts(), ids);
    }

    /** Zeroes every call and allocation count (the reports written at exit count from here too). */
    public static void reset() {
        invoke(agent().resetCalls);
        invoke(agent().resetAllocations);
    }

    /** "counts", "times" or "off" (no method probes in the rules). */
    public static String mode() {
        return (String) invoke(agent().mode);
    }

    /** All counts as of now; its methods return what happened since. */
    public static Snapshot snapshot() {
        return new Snapshot(callCounts(), instanceCounts(), siteCounts());
    }

    /** The counts at one moment: {@code calls(...)} and {@code allocations(...)} are differences since then. */
    public static final class Snapshot {
        private final long[] calls, instances, sites;

        private Snapshot(long[] calls, long[] instances, long[] sites) {
            this.calls = calls;
            this.instances = instances;
            this.sites = sites;
        }

        public long calls(String className, String method) {
            return calls(className, method, null);
        }

        public long calls(String className, String method, String descriptor) {
            int[] ids = methodIds(className, method, descriptor);
            return sum(callCounts(), ids) - sum(calls, ids);
        }

        public long allocations(Class<?> type) {
            return Counts.allocations(instanceCounts(), type) - Counts.allocations(instances, type);
        }

        public long allocations(String className, String method, int line) {
            int[] ids = (int[]) invoke(agent().siteIds, className, method, line);
            return sum(siteCounts(), ids) - sum(sites, ids);
        }
    }

    // ---- internals

    private static int[] methodIds(String className, String method, String descriptor) {
        Agent a = agent();
        if ("off".equals(invoke(a.mode))) {
            throw new IllegalStateException("instr: method probes are off; add `methods` to the rules' probes");
        }
        int[] ids = (int[]) invoke(a.methodIds, className, method, descriptor);
        if (ids.length == 0 && !(boolean) invoke(a.classSelected, className)) {
            throw new IllegalArgumentException("instr: " + className + "." + method
                    + (descriptor == null ? "" : descriptor) + " has no probes: the rules' methods.include does not "
                    + "select " + className);
        }
        return ids;
    }

    private static long[] callCounts() {
        return (long[]) invoke(agent().callCounts);
    }

    private static long[] instanceCounts() {
        return (long[]) invoke(agent().instanceCounts);
    }

    private static long[] siteCounts() {
        return (long[]) invoke(agent().siteCounts);
    }

    private static long allocations(long[] counts, Class<?> type) {
        int slot = (int) invoke(agent().classSlotOf, type);
        return slot >= 0 && slot < counts.length ? counts[slot] : 0;
    }

    private static long sum(long[] counts, int[] ids) {
        long n = 0;
        for (int id : ids) if (id > 0 && id < counts.length) n += counts[id];
        return n;
    }

    private static Object invoke(MethodHandle h, Object... args) {
        try {
            return h.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
