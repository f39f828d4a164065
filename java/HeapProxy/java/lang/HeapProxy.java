/*
 * The class every probe calls. libinstr.so embeds its bytes and defines it in java.base, package java.lang,
 * during the early VM_START phase, before any bytecode runs (docs/ARCHITECTURE.md, "Where HeapProxy lives").
 *
 * Two flavours per probe, chosen by the rewriter per class:
 *  - earlyX: for classes loaded while the VM starts. They return at once until the agent calls engage() at
 *    VM_INIT, because until then nothing else may run: the class initialiser of HeapProxy itself may be
 *    triggered from the first Object.<init>, long before Unsafe or the natives can be used.
 *  - x: the unguarded fast path, for classes loaded once the agent is engaged.
 *
 * The per-allocation work is Java, in HeapProxyAllocs (per-thread rows, plain adds; see that class): this class
 * only picks the mode's method by a static final of that class, which the JIT folds. Natives are reached only
 * when a class is seen for the first time (its instance size), for live samples and, when the rules ask for
 * stacks deeper than the allocating frame (depth > 1), for the stack walk. The allocating frame itself is
 * static: the rewriter gives every `new` and array instruction a site id.
 *
 * Rules for everything here, because Object.<init> calls it for every object:
 *  - allocate no object (arrays are fine: they do not run Object.<init>), throw nothing, call no JDK method that
 *    could carry a probe (only intrinsics and natives: getClass, identityHashCode, Unsafe);
 *  - keep <clinit> empty: it may run inside the VM's own bootstrap.
 */
package java.lang;

import jdk.internal.vm.annotation.Stable;

public final class HeapProxy {
    private HeapProxy() {}

    /**
     * Set by the agent through engage() and cleared at VM death; the early probes do nothing while it is false.
     * Stable, not volatile: once it is true the JIT folds it, so the early flavour's check costs compiled code
     * nothing (a volatile read stays a load and a branch in every Object.<init> and early `new`). The JIT folds
     * only a non-default value, so code compiled before engage() reads the field as any other. The settings the
     * probes use are published by HeapProxyAllocs' class initialisation, not by this flag.
     */
    @Stable
    static boolean engaged;

    // The settings engage() receives, read once by HeapProxyAllocs' <clinit> into static finals.
    static long LONGS;          // base offset of long[] elements
    static long LONG_SCALE;
    static long REFS;           // base offset of Object[] elements
    static long REF_SCALE;
    static long INTS;           // base offset of int[] elements
    static long INT_SCALE;

    /** Set by the agent when the XML trace records allocations: every object is reported to it (a native call). */
    static boolean traceObjects;

    /** Frames per allocation site: 0 per class only, 1 the allocating frame (a static site), more: a stack walk. */
    static int depth;

    /**
     * Tag one object in liveEvery for live tracking (0: off, 1: every object). With sites (depth > 0) the
     * sample is taken per site and the tag names the site; at depth 0 per class, naming the class.
     */
    static int liveEvery;
    /** 2^32 / liveEvery: an object is sampled when a 32-bit hash of its number falls below it. */
    static long liveBelow;

    static int classSlots;
    static int maxSites;
    /** Per-thread rows of allocation counts: threads whose tids share the low bits share a slot (one at a time). */
    static int threadSlots;

    // Array layout, measured by the agent with GetObjectSize.
    static long arrayHeader;
    static int refBytes;

    /** [0]: probes whose id or class did not fit the tables; reported, never silently lost. */
    private static long[] dropped;

    /**
     * Called by the agent (JNI) at VM_INIT, once the natives are bound. The agent measures the array layout and
     * asks Unsafe for the element offsets (Unsafe.arrayBaseOffset returns int up to JDK 22 and long after, so
     * this class, compiled once, cannot call it itself).
     */
    static void engage(int stackDepth, int classSlotCount, int maxSiteCount, int maxMethods, long header,
                       int refSize, long longBase, long longScale, long refBase, long refScale, long intBase,
                       long intScale, int sampleLive, int threadSlotCount) {
        LONGS = longBase;
        LONG_SCALE = longScale;
        REFS = refBase;
        REF_SCALE = refScale;
        INTS = intBase;
        INT_SCALE = intScale;
        depth = stackDepth;
        liveEvery = sampleLive;
        liveBelow = sampleLive > 0 ? (1L << 32) / sampleLive : 0;
        classSlots = classSlotCount;
        maxSites = maxSiteCount;
        threadSlots = threadSlotCount;
        arrayHeader = header;
        refBytes = refSize;
        HeapProxyAllocs.engage();
        dropped = HeapProxyAllocs.DROPPED;
        engaged = true;
    }

    // ---- early flavour

    public static void earlyObjectAlloc(Object o) { if (engaged) objectAlloc(o); }
    public static void earlyArrayAlloc(Object a, int site) { if (engaged) arrayAlloc(a, site); }
    public static void earlyMultiArrayAlloc(Object a, int site) { if (engaged) multiArrayAlloc(a, site); }
    public static void earlyArrayMade(Object a) { if (engaged) arrayMade(a); }
    public static void earlySuperCloned(Object o, int method, Class<?> start) { if (engaged) superCloned(o, method, start); }
    public static void earlyObjectNew(int site) { if (engaged) objectNew(site); }
    public static void earlyObjectBuilt(Object o, int site) { if (engaged) objectBuilt(o, site); }
    public static void earlyMethodEnter(int id) { if (engaged) methodEnter(id); }
    public static void earlyMethodExit(int id) { if (engaged) methodExit(id); }
    public static void earlyMethodUnwind(int id) { if (engaged) methodUnwind(id); }
    public static void earlyCountCall(int id) { if (engaged) countCall(id); }
    public static void earlyCountUnwind(int id) { if (engaged) countUnwind(id); }

    // ---- native flavour: the fast path
    //
    // HeapProxyAllocs' mode fields are static finals of an initialised class: the JIT keeps one branch. Each of
    // these is at most 35 bytes of bytecode, so that C1 inlines it (see HeapProxyAllocs).

    public static void objectAlloc(Object o) {
        if (HeapProxyAllocs.OBJECTS == 0) HeapProxyAllocs.object(o.getClass());
        else if (HeapProxyAllocs.OBJECTS == 1) HeapProxyAllocs.objectSampled(o);
        else HeapProxyAllocs.objectSlowly(o);
    }

    /**
     * An object or array the VM allocated outside the watched bytecode (VMObjectAlloc: clone,
     * Unsafe.allocateInstance, Array.newInstance, JNI). `what`: 1 count it if it is an array, 2 count it if
     * it is an instance (the agent passes 2 only when no constructor can run for it).
     */
    static void vmAlloc(Object o, int what) {
        if (o.getClass().isArray()) {
            // The VM reports each sub-array of a multi-dimensional array itself: no walk here.
            if ((what & 1) != 0) HeapProxyAllocs.vmArray(o);
        } else if ((what & 2) != 0) {
            objectAlloc(o);
        }
    }

    /** An object of a `new` site, its constructor finished: sampled for live tracking by site. */
    public static void objectBuilt(Object o, int site) {
        HeapProxyAllocs.built(o, site);
    }

    /**
     * After a `new` at `site`: its bytes are the class's instance size times the count, in the report. The stack
     * walk is made from here, so that the frames above the allocating one are always the native and this probe.
     */
    public static void objectNew(int site) {
        HeapProxyAllocs.objectNew(site);
        if (HeapProxyAllocs.DEPTH > 1) siteStack(site, 0);
    }

    /** After a newarray or anewarray (whose elements are null: no sub-arrays to count). */
    public static void arrayAlloc(Object a, int site) {
        long size = HeapProxyAllocs.array(a, site);
        if (HeapProxyAllocs.DEPTH > 1) siteStack(site, size);
    }

    /**
     * After a call that returns an array the VM or the JIT made: an array's clone() or Array.newInstance(Class,
     * int). Counted here, by class, because C2's code for them posts no VMObjectAlloc (the agent leaves the
     * natives' own events for these two alone).
     */
    public static void arrayMade(Object a) {
        HeapProxyAllocs.madeArray(a);
    }

    /**
     * After super.clone() in a class whose superclass is not Object (rewriter/src/probes/vm_made.rs): the object,
     * as objectAlloc counts it, when the call reached Object.clone, i.e. when no class from `start` (the caller's
     * superclass) up declares a clone() of its own, which would count the object itself. The agent decides once
     * per method; the answer is kept by method id.
     */
    public static void superCloned(Object o, int method, Class<?> start) {
        if (HeapProxyAllocs.reachesObjectClone(method, start)) objectAlloc(o);
    }

    /**
     * After a multianewarray: the outer array as arrayAlloc, and the sub-arrays it made, by class. Not through
     * arrayAlloc: the stack walk skips a fixed number of HeapProxy frames.
     */
    public static void multiArrayAlloc(Object a, int site) {
        long size = HeapProxyAllocs.array(a, site);
        HeapProxyAllocs.subArrays(a, site);
        if (HeapProxyAllocs.DEPTH > 1) siteStack(site, size);
    }

    // Method calls: java/lang/HeapProxyCalls.java.
    // HeapProxyCalls.TIMED is a static final of an initialised class: the JIT keeps one branch.
    public static void methodEnter(int id) {
        if (HeapProxyCalls.TIMED) HeapProxyCalls.timedEnter(id); else countCall(id);
    }
    public static void methodExit(int id) { if (HeapProxyCalls.TIMED) HeapProxyCalls.timedExit(id); }
    public static void methodUnwind(int id) {
        if (HeapProxyCalls.TIMED) HeapProxyCalls.timedUnwind(id); else HeapProxyCalls.unwind(id);
    }
    // Methods whose calls are counted only (every method under calls=counts, leaves under calls=times):
    // no shadow frame, so no exit probe either. The entry probe counts here rather than in a method of
    // HeapProxyCalls: every level the JIT inlines at each probed method is a parse of its own, and C2's share of
    // what counting calls costs is half (bench/README.md, "the JIT compiles much more bytecode").
    public static void countCall(int id) {
        long[] c = HeapProxyCalls.mine(HeapProxyCalls.enters);
        if (c != null && id < c.length) c[id]++;
        else HeapProxyCalls.enterSlowly(id);
    }
    public static void countUnwind(int id) { HeapProxyCalls.unwind(id); }

    // ---- natives (exported by libinstr.so as Java_java_lang_HeapProxy_*), called by HeapProxyAllocs too

    /**
     * A class seen for the first time: the agent gives the dense index of its name (the same for every class of
     * that name, whichever loader defined it) and records the name and instance size under it; -1 when full.
     * `instance` may be null for a class that is not an array: the agent then sizes an instance it allocates.
     */
    static native int classIndex(Class<?> c, Object instance);
    /** Reports an object to the XML trace (docs/XML-TRACE.md). */
    static native void traceObject(Object o, int index);
    /** Tags an object sampled for live tracking with its class's dense index (depth 0). */
    static native void tag(Object o, int index);
    /** Tags an object or array sampled for live tracking with its allocation site (depth > 0). */
    static native void tagSite(Object o, int site);
    /** Whether no class from `start` up to Object declares an instance clone() that overrides Object's. */
    static native boolean reachesObjectClone(Class<?> start);
    /** Records the current stack for an allocation at `site` (bytes: arrays only, objects are sized later). */
    private static native void siteStack(int site, long bytes);

    // ==== Accessors for instr.Counts (java/instr-api) and the agent's reports. Not on any probe path. Maintained
    // ==== with the method-call side (HeapProxyCalls.java); everything above is allocation.

    /** The dense index of class c (what instanceCounts() is indexed by), or -1 if no instance of it was counted. */
    public static int classSlotOf(Class<?> c) {
        return started() ? HeapProxyAllocs.indexOf(c) : -1;
    }

    /** The instance counts by dense class index, summed over the threads (a new array). */
    public static long[] instanceCounts() {
        return started() ? evens(HeapProxyAllocs.classTotals()) : new long[0];
    }

    /** The site counts by site id, summed over the threads (a new array). */
    public static long[] siteCounts() {
        return started() ? evens(HeapProxyAllocs.siteTotals()) : new long[0];
    }

    /** Threads holding rows of allocation counts now (those that ended hold none); for tests and diagnosis. */
    public static int threadRowsHeld() {
        return started() ? HeapProxyAllocs.rowsHeld() : 0;
    }

    /** Counts allocations from now on (other threads may be allocating meanwhile), in the reports too. */
    public static void resetAllocations() {
        if (started()) HeapProxyAllocs.reset();
    }

    /** For the agent's reports: [2k] instances and [2k + 1] array bytes of the class of dense index k. */
    static long[] classTotals() {
        return started() ? HeapProxyAllocs.classTotals() : new long[0];
    }

    /** For the agent's reports: [2s] count and [2s + 1] array bytes of site s. */
    static long[] siteTotals() {
        return started() ? HeapProxyAllocs.siteTotals() : new long[0];
    }

    /** Writes an HPROF heap dump now (instr.Counts.heapDump); its path, or null if none was written. */
    public static native String heapDump();

    /** One command of the control channel (instr.Control): the answer, "ok" or "error: ..." first. */
    public static native String control(String command);

    /** Hash slots holding a class that has not unloaded; for tests of the table's bound and diagnosis. */
    public static int classSlotsHeld() {
        return started() ? HeapProxyAllocs.classSlotsHeld() : 0;
    }

    /** Called by the agent (JNI) from JVMTI ThreadEnd, on the ending thread: its rows join the shared totals. */
    static void retireThread() {
        if (started()) HeapProxyAllocs.retire();
        HeapProxyCalls.retire();
    }

    /**
     * Whether engage() ran, so that HeapProxyAllocs has its settings: initialised without them (the agent could
     * not engage), it would read its tables at offset 0.
     */
    private static boolean started() {
        return LONG_SCALE != 0;
    }

    private static long[] evens(long[] t) {
        long[] out = new long[t.length / 2];
        for (int i = 0; i < out.length; i++) out[i] = t[2 * i];
        return out;
    }
}
