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
 * The per-allocation work is Java: identity-hash lookup of the class, then atomic adds into arrays. Natives are
 * reached only when a class is seen for the first time (its instance size) and, when the rules ask for stacks
 * deeper than the allocating frame (depth > 1), for the stack walk. The allocating frame itself is static: the
 * rewriter gives every `new` and array instruction a site id.
 *
 * Rules for everything here, because Object.<init> calls it for every object:
 *  - allocate no object (arrays are fine: they do not run Object.<init>), throw nothing, call no JDK method that
 *    could carry a probe (only intrinsics and natives: getClass, identityHashCode, Unsafe);
 *  - keep <clinit> empty: it may run inside the VM's own bootstrap.
 */
package java.lang;

import jdk.internal.misc.Unsafe;

public final class HeapProxy {
    private HeapProxy() {}

    /** Set by the agent through engage() and cleared at VM death; probes do nothing while it is false. */
    static volatile boolean engaged;

    private static Unsafe U;
    private static long LONGS;          // base offset of long[] elements
    private static long LONG_SCALE;
    private static long REFS;           // base offset of Object[] elements
    private static long REF_SCALE;

    /** Set by the agent when the XML trace records allocations: every object is reported to it (a native call). */
    static boolean traceObjects;

    /** Frames per allocation site: 0 per class only, 1 the allocating frame (a static site), more: a stack walk. */
    private static int depth;

    /**
     * Tag one object in liveEvery for live tracking (0: off, 1: every object). With sites (depth > 0) the
     * sample is taken per site and the tag names the site; at depth 0 per class, naming the class.
     */
    private static int liveEvery;
    /** 2^32 / liveEvery: an object is sampled when a 32-bit hash of its number falls below it. */
    private static long liveBelow;

    // Classes by identity hash, open addressing. A slot is claimed once with a CAS and never freed.
    private static Class<?>[] classes;
    private static long[] instances;
    private static long[] arrayBytes;     // arrays: bytes summed per allocation (instances have a fixed size)

    // Allocation sites (`new` and array instructions) by the rewriter's site id.
    private static long[] siteCount;
    private static long[] siteBytes;
    private static long[] siteBuilt;      // objects finished per `new` site: the live sample's counter

    // Array layout, measured by the agent with GetObjectSize.
    private static long arrayHeader;
    private static int refBytes;

    /** [0]: probes whose id or class did not fit the tables; reported, never silently lost. */
    private static long[] dropped;

    /**
     * Called by the agent (JNI) at VM_INIT, once the natives are bound. The agent measures the array layout and
     * asks Unsafe for the element offsets (Unsafe.arrayBaseOffset returns int up to JDK 22 and long after, so
     * this class, compiled once, cannot call it itself).
     */
    static void engage(int stackDepth, int classSlots, int maxSites, int maxMethods, long header, int refSize,
                       long longBase, long longScale, long refBase, long refScale, int sampleLive) {
        U = Unsafe.getUnsafe();
        LONGS = longBase;
        LONG_SCALE = longScale;
        REFS = refBase;
        REF_SCALE = refScale;
        depth = stackDepth;
        liveEvery = sampleLive;
        liveBelow = sampleLive > 0 ? (1L << 32) / sampleLive : 0;
        classes = new Class<?>[classSlots];
        instances = new long[classSlots];
        arrayBytes = new long[classSlots];
        siteCount = new long[maxSites];
        siteBytes = new long[maxSites];
        siteBuilt = new long[sampleLive > 0 && stackDepth > 0 ? maxSites : 1];
        arrayHeader = header;
        refBytes = refSize;
        dropped = new long[1];
        engaged = true;
    }

    // ---- early flavour

    public static void earlyObjectAlloc(Object o) { if (engaged) objectAlloc(o); }
    public static void earlyArrayAlloc(Object a, int site) { if (engaged) arrayAlloc(a, site); }
    public static void earlyObjectNew(int site) { if (engaged) objectNew(site); }
    public static void earlyObjectBuilt(Object o, int site) { if (engaged) objectBuilt(o, site); }
    public static void earlyMethodEnter(int id) { if (engaged) methodEnter(id); }
    public static void earlyMethodExit(int id) { if (engaged) methodExit(id); }
    public static void earlyMethodUnwind(int id) { if (engaged) methodUnwind(id); }
    public static void earlyCountCall(int id) { if (engaged) countCall(id); }
    public static void earlyCountUnwind(int id) { if (engaged) countUnwind(id); }

    // ---- native flavour: the fast path

    public static void objectAlloc(Object o) {
        int slot = slot(o);
        if (slot < 0) return;
        long before = add(instances, slot, 1);
        if (liveEvery > 0 && depth == 0 && sampled(before)) tag(o, slot);
        if (traceObjects) traceObject(o, slot);
    }

    /**
     * An object or array the VM allocated outside the watched bytecode (VMObjectAlloc: clone,
     * Unsafe.allocateInstance, Array.newInstance, JNI). `what`: 1 count it if it is an array, 2 count it if
     * it is an instance (the agent passes 2 only when no constructor can run for it).
     */
    static void vmAlloc(Object o, int what) {
        if (o.getClass().isArray()) {
            // The VM reports each sub-array of a multi-dimensional array itself: no walk here.
            if ((what & 1) != 0) countOneArray(o, 0);
        } else if ((what & 2) != 0) {
            objectAlloc(o);
        }
    }

    /** An object of a `new` site, its constructor finished: sampled for live tracking by site. */
    public static void objectBuilt(Object o, int site) {
        if (site > 0 && site < siteBuilt.length) {
            if (sampled(add(siteBuilt, site, 1))) tagSite(o, site);
        } else {
            add1Dropped();
        }
    }

    /** After a `new` at `site`: its bytes are the class's instance size times the count, in the report. */
    public static void objectNew(int site) {
        if (site > 0 && site < siteCount.length) {
            add(siteCount, site, 1);
        } else {
            add1Dropped();
        }
        if (depth > 1) siteStack(site, 0);
    }

    public static void arrayAlloc(Object a, int site) {
        boolean known = site > 0 && site < siteCount.length;
        long size = countArray(a, known ? site : 0);
        if (known) {
            add(siteCount, site, 1);
            add(siteBytes, site, size);
        } else {
            add1Dropped();
        }
        if (depth > 1) siteStack(site, size);
    }

    // Method calls: java/lang/HeapProxyCalls.java.
    // HeapProxyCalls.TIMED is a static final of an initialised class: the JIT keeps one branch.
    public static void methodEnter(int id) {
        if (HeapProxyCalls.TIMED) HeapProxyCalls.timedEnter(id); else HeapProxyCalls.enter(id);
    }
    public static void methodExit(int id) { if (HeapProxyCalls.TIMED) HeapProxyCalls.timedExit(id); }
    public static void methodUnwind(int id) {
        if (HeapProxyCalls.TIMED) HeapProxyCalls.timedUnwind(id); else HeapProxyCalls.unwind(id);
    }
    // Methods whose calls are counted only (every method under calls=counts, leaves under calls=times):
    // no shadow frame, so no exit probe either.
    public static void countCall(int id) { HeapProxyCalls.enter(id); }
    public static void countUnwind(int id) { HeapProxyCalls.unwind(id); }

    // ---- natives (exported by libinstr.so as Java_java_lang_HeapProxy_*)

    /** A class seen for the first time: the agent records its instance size. */
    private static native void classSeen(int slot, Object instance);
    /** Reports an object to the XML trace (docs/XML-TRACE.md). */
    private static native void traceObject(Object o, int slot);
    /** Tags an object sampled for live tracking with its class slot (depth 0). */
    private static native void tag(Object o, int slot);
    /** Tags an object or array sampled for live tracking with its allocation site (depth > 0). */
    private static native void tagSite(Object o, int site);
    /** Records the current stack for an allocation at `site` (bytes: arrays only, objects are sized later). */
    private static native void siteStack(int site, long bytes);

    // ---- internals

    /**
     * Whether the n-th object (of a class, or of a site) is tagged for live tracking: one in liveEvery on
     * average, chosen by a hash of n rather than n % liveEvery, so that a program keeping every k-th object
     * does not bias the estimate. A compare, not a division: this runs for every object.
     */
    private static boolean sampled(long n) {
        return (((n + 1) * 0x9E3779B97F4A7C15L) >>> 32) < liveBelow;
    }

    /** Adds atomically; returns the value before. */
    private static long add(long[] table, int index, long delta) {
        return U.getAndAddLong(table, LONGS + index * LONG_SCALE, delta);
    }

    private static void add1Dropped() {
        add(dropped, 0, 1);
    }

    /**
     * Counts an array and, for multianewarray, the sub-arrays it already holds (allocated at the same site);
     * returns the outer array's bytes.
     */
    private static long countArray(Object a, int site) {
        long size = countOneArray(a, site);
        if (a instanceof Object[] outer && holdsArrays(outer)) {
            for (Object inner : outer) {
                if (inner != null) countArray(inner, site);
            }
        }
        return size;
    }

    /** Counts one array; live samples are taken per class, or per site when there are sites. */
    private static long countOneArray(Object a, int site) {
        int slot = slot(a);
        long size = arraySize(a);
        if (slot >= 0) {
            long before = add(instances, slot, 1);
            add(arrayBytes, slot, size);
            if (liveEvery > 0 && sampled(before)) {
                if (depth == 0) tag(a, slot);
                else if (site > 0) tagSite(a, site);
            }
        }
        return size;
    }

    /** Whether the component type is an array type, by instanceof only (no JDK method on this path). */
    private static boolean holdsArrays(Object[] a) {
        return a instanceof Object[][] || a instanceof int[][] || a instanceof long[][] || a instanceof byte[][]
                || a instanceof char[][] || a instanceof double[][] || a instanceof float[][]
                || a instanceof short[][] || a instanceof boolean[][];
    }

    private static long arraySize(Object a) {
        long n;
        int elem;
        if (a instanceof Object[] x) { n = x.length; elem = refBytes; }
        else if (a instanceof int[] x) { n = x.length; elem = 4; }
        else if (a instanceof byte[] x) { n = x.length; elem = 1; }
        else if (a instanceof char[] x) { n = x.length; elem = 2; }
        else if (a instanceof long[] x) { n = x.length; elem = 8; }
        else if (a instanceof double[] x) { n = x.length; elem = 8; }
        else if (a instanceof float[] x) { n = x.length; elem = 4; }
        else if (a instanceof short[] x) { n = x.length; elem = 2; }
        else if (a instanceof boolean[] x) { n = x.length; elem = 1; }
        else return 0;
        return (arrayHeader + n * elem + 7) & ~7L;
    }

    /** The table slot of o's class, claiming one (and telling the agent) the first time. -1 if the table is full. */
    private static int slot(Object o) {
        Class<?> c = o.getClass();
        Class<?>[] table = classes;
        int mask = table.length - 1;
        int i = System.identityHashCode(c) & mask;
        for (int probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
            Class<?> k = table[i];
            if (k == c) return i;
            if (k == null) {
                if (U.compareAndSetReference(table, REFS + i * REF_SCALE, null, c)) {
                    classSeen(i, o);
                    return i;
                }
                if (table[i] == c) return i;
            }
        }
        add1Dropped();
        return -1;
    }

    // ==== Accessors for instr.Counts (java/instr-api), used by tests that assert allocation counts. Not on any
    // ==== probe path. Maintained with the method-call side (HeapProxyCalls.java); everything above is allocation.

    /** The table slot of class c, or -1 if no instance of it has been counted. */
    public static int classSlotOf(Class<?> c) {
        Class<?>[] table = classes;
        if (table == null || c == null) return -1;
        int mask = table.length - 1;
        int i = System.identityHashCode(c) & mask;
        for (int probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
            Class<?> k = table[i];
            if (k == c) return i;
            if (k == null) return -1;
        }
        return -1;
    }

    /** A copy of the instance counts by class slot. */
    public static long[] instanceCounts() {
        long[] t = instances;
        return t == null ? new long[0] : t.clone();
    }

    /** A copy of the array-site counts by site id. */
    public static long[] siteCounts() {
        long[] t = siteCount;
        return t == null ? new long[0] : t.clone();
    }

    /** Zeroes the allocation counts (other threads may be allocating meanwhile). */
    public static void resetAllocations() {
        for (long[] t : new long[][] { instances, arrayBytes, siteCount, siteBytes }) {
            if (t != null) for (int i = 0; i < t.length; i++) t[i] = 0;
        }
    }
}
