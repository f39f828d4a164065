/*
 * The allocation half of the probes: HeapProxy.objectAlloc, objectNew, arrayAlloc, objectBuilt and vmAlloc
 * delegate here. libinstr.so defines this class in java.base beside HeapProxy in the early VM_START phase;
 * HeapProxy.engage() initialises it at VM_INIT (docs/ARCHITECTURE.md, "Counting is Java").
 *
 * Every thread counts into rows of its own with plain adds: an atomic add on a shared array (what this replaced)
 * costs a locked instruction per allocation and bounces cache lines between the cores of a multi-threaded
 * allocator (sunflow's 18 threads: 1.42x). Threads that cannot have rows (below) add atomically to the shared
 * arrays, which also hold the rows of the threads that ended. A total is therefore the shared value plus every
 * live row's, which totals() sums under LOCK; retire() moves an ending thread's rows into the shared arrays
 * under the same lock, so a reader sees each count exactly once whether the thread ended before, during or after
 * the read.
 *
 *  - Slots. A thread's slot is the low bits of its Thread.tid (read with Unsafe: one load, whatever the state of
 *    the Thread's monitor), and it owns the slot while THREADS[slot] is the thread itself: one compare on the hot
 *    path. A thread whose slot another live thread holds, a thread with slot 0 (the "no rows" slot the hot path
 *    falls back to), a thread not yet given a tid and a virtual thread (no THREAD_END event tells when it is done)
 *    count in the shared arrays, exactly and as slowly as before. Slots are freed when their thread ends.
 *  - Classes. A class is found by identity hash in CLASSES (open addressing, slots claimed by CAS) and gets a
 *    dense index there the first time it is seen, so that a thread's class row is as long as the highest index it
 *    touched, not as the whole hash table. The agent gives the index, one per class *name* (classIndex): a class
 *    defined again by each of 10,000 throw-away loaders counts in one column under its name, and the counts of an
 *    unloaded class stay in the rows. Row columns are 2 * index (instances) and 2 * index + 1 (array bytes);
 *    columns 0 and 1 hold the row's sampling salt. COLUMNS gives the column by hash slot.
 *  - Calls, not inlined. The counting paths (object, objectNew, arrayOf) are @DontInline: every allocating
 *    method calls them. Inlined, their ~290 bytes of bytecode at every `new` were parsed and optimised again in
 *    every method C2 compiled, which cost more CPU than the calls do (bench/README.md, 2026-11-27, "the counting
 *    probes as calls"). The inlined part is the probe's wrapper in HeapProxy: the mode's branch, getClass() and
 *    the array's size, which C2 folds for an allocation of a known type.
 *  - Escape. Those calls, and every slow branch, are given the class, never the object or array, wherever the
 *    object is not needed (it is for live samples and the trace): an object passed to a call escapes, which
 *    would cost every allocation its scalar replacement.
 *  - Unloading. The table must not keep a class loaded. A class that can never unload (boot, platform and
 *    application loaders, not hidden) is held by its Class, which the hot path compares at once; any other class
 *    by a WeakReference, compared through its referent on the next step of the hot path. Once such a class has
 *    unloaded, sweep() frees its slot (FREED, which lookups pass over and inserts reuse).
 *  - Sites. Site ids come from the rewriter, dense already but up to 2^20 of them, and a thread touches few: site
 *    rows are pages of PAGE sites, made on first use ([2j] count, [2j + 1] array bytes).
 *
 * Settings are static finals read from HeapProxy's fields when this class initialises, so the JIT folds the modes
 * and the table references. Every method inlined into probed code (HeapProxy's wrappers, array(), the live-sampling
 * paths) is at most 35 bytes of bytecode (MaxInlineSize: C1 inlines nothing bigger); the rare work is in *Slowly.
 *
 * Rules (as for HeapProxy: Object.<init> runs this for every object): allocate no object (arrays are fine: a row
 * or page when a thread first needs it, the totals; the weak keys are made by Unsafe.allocateInstance, which runs
 * no constructor, so neither an allocation nor a call is counted that the program did not make), throw nothing,
 * call no JDK method that could carry a probe (only Thread.currentThread, getClass, Class.isHidden,
 * System.identityHashCode, System.arraycopy and Unsafe). The <clinit> may do work: nothing reaches this class
 * before HeapProxy.engage().
 */
package java.lang;

import java.lang.ref.Reference;
import java.lang.ref.WeakReference;

import jdk.internal.misc.Unsafe;
import jdk.internal.vm.annotation.DontInline;

final class HeapProxyAllocs {
    private HeapProxyAllocs() {}

    private static final Unsafe U = Unsafe.getUnsafe();
    private static final long LONGS = HeapProxy.LONGS;
    private static final long LONG_SCALE = HeapProxy.LONG_SCALE;
    private static final long REFS = HeapProxy.REFS;
    private static final long REF_SCALE = HeapProxy.REF_SCALE;
    private static final long INTS = HeapProxy.INTS;
    private static final long INT_SCALE = HeapProxy.INT_SCALE;

    /** Frames per site: 0 per class only, 1 the allocating frame, more: HeapProxy walks the stack. */
    static final int DEPTH = HeapProxy.depth;
    static final boolean LIVE = HeapProxy.liveEvery > 0;
    /** 2^32 / liveEvery: an object is sampled when a 32-bit hash of its number falls below it. */
    private static final long BELOW = HeapProxy.liveBelow;
    private static final boolean TRACE = HeapProxy.traceObjects;
    /** What objectAlloc does: 0 count, 1 count and sample per class (live, depth 0), 2 the long way (the trace). */
    static final int OBJECTS = TRACE ? 2 : LIVE && DEPTH == 0 ? 1 : 0;
    private static final long HEADER = HeapProxy.arrayHeader;
    private static final int REF_BYTES = HeapProxy.refBytes;

    /** Offset of Thread.tid: a constant, so reading it is a plain field load. */
    private static final long TID = U.objectFieldOffset(Thread.class, "tid");
    /** java.lang.VirtualThread (null before JDK 21): its threads never get a slot. */
    private static final Class<?> VIRTUAL = virtualThreadClass();

    // ---- thread slots

    private static final int SLOTS = powerOfTwo(HeapProxy.threadSlots, 2);
    private static final int SLOT_MASK = SLOTS - 1;
    /** The owner of each slot; slot 0 is never owned, so its rows stay empty. */
    private static final Thread[] THREADS = new Thread[SLOTS];

    // ---- classes

    private static final int NONE = Integer.MAX_VALUE;
    private static final int CLASS_SLOTS = powerOfTwo(HeapProxy.classSlots, 2);
    private static final int CLASS_MASK = CLASS_SLOTS - 1;
    /**
     * Classes by identity hash, open addressing: the Class of a class that never unloads, a WeakReference to any
     * other, or FREED (its class unloaded). A slot is claimed with a CAS.
     */
    private static final Object[] CLASSES = new Object[CLASS_SLOTS];
    /** A slot whose class unloaded: lookups go past it, inserts may take it. An array: allocated uncounted. */
    private static final Object FREED = new long[0];
    /** By hash slot: the class's row column (2 * index), NONE until the index is assigned. */
    private static final int[] COLUMNS = filled(CLASS_SLOTS, NONE);
    private static final long REFERENT = U.objectFieldOffset(Reference.class, "referent");
    private static final long QUEUE = U.objectFieldOffset(Reference.class, "queue");
    private static final long LOADER = U.objectFieldOffset(Class.class, "classLoader");
    /** The queue a WeakReference made without one has (ReferenceQueue.NULL, renamed NULL_QUEUE in JDK 25). */
    private static final Object NO_QUEUE = U.getReference(new WeakReference<Object>(null), QUEUE);
    private static final ClassLoader PLATFORM = ClassLoader.getPlatformClassLoader();
    private static final ClassLoader SYSTEM = ClassLoader.getSystemClassLoader();
    /** Weak keys made since the last sweep; a sweep every SWEEP_EVERY of them bounds the dead slots. */
    private static final long[] WEAK_MADE = new long[1];
    private static final int SWEEP_EVERY = 256;
    private static final long[] EMPTY = new long[0];
    private static final long[][] CLASS_ROWS = rows(SLOTS, EMPTY);
    /** Columns as in a row: retired threads and threads without a slot (atomic adds). */
    private static final long[] SHARED_CLASSES = new long[2 * CLASS_SLOTS];
    /** [0]: the highest dense index given a column, so that the readers sum the columns in use, not the table. */
    private static final int[] HIGHEST_INDEX = new int[1];

    // ---- sites

    private static final int PAGE_SHIFT = 7;
    /** Longs per page of a shared table: one thread page's worth of sites (PAGE sites, two columns). */
    private static final int SHARED_PAGE_SHIFT = PAGE_SHIFT + 1;
    private static final int SHARED_PAGE_MASK = (1 << SHARED_PAGE_SHIFT) - 1;
    private static final int PAGE = 1 << PAGE_SHIFT;
    private static final int PAGE_MASK = PAGE - 1;
    private static final int MAX_SITES = powerOfTwo(HeapProxy.maxSites, 1);
    private static final long[][] NO_PAGES = new long[0][];
    /** Per slot, pages of PAGE sites: [2j] count, [2j + 1] array bytes. */
    private static final long[][][] SITE_PAGES = pages(SLOTS, NO_PAGES);
    /**
     * Shared site totals, paged like the threads' rows and made on first use: a flat table for every possible site
     * was 16 MB of zeroed heap at start-up (a third of a hello world's start-up under the agent), and was read whole
     * at exit.
     */
    private static final long[][] SHARED_SITES = new long[(2 * MAX_SITES) >>> SHARED_PAGE_SHIFT][];
    /** Per slot, pages of PAGE sites: objects finished, the live sample's counter (depth > 0). Not reported. */
    private static final long[][][] BUILT_PAGES = pages(SLOTS, NO_PAGES);
    private static final long[][] SHARED_BUILT = new long[LIVE && DEPTH > 0 ? MAX_SITES >>> SHARED_PAGE_SHIFT : 0][];

    /** [0]: probes whose site or class did not fit the tables; reported, never silently lost. */
    static final long[] DROPPED = new long[1];

    /** Held by retire() and by the readers, so that a retiring thread's counts are seen exactly once. */
    private static final long[] LOCK = new long[0];
    /** The sums at the last reset (guarded by LOCK); totals are counted from them. */
    private static long[] baseClasses, baseSites;

    /** Called by HeapProxy.engage(); the first call initialises the class. */
    static void engage() {}

    private static int powerOfTwo(int n, int least) {
        int p = least;
        while (p < n && p < (1 << 30)) p <<= 1;
        return p;
    }

    private static int[] filled(int n, int value) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = value;
        return t;
    }

    // The fillers take their value as an argument: while this class initialises, every getstatic of its own fields
    // is resolved again by the interpreter (the constant-pool entry is not cached until initialisation ends), a
    // slow lookup that cost 12 ms of a hello world's start-up when the loops read EMPTY and NO_PAGES directly.

    private static long[][] rows(int n, long[] empty) {
        long[][] t = new long[n][];
        for (int i = 0; i < n; i++) t[i] = empty;
        return t;
    }

    private static long[][][] pages(int n, long[][] none) {
        long[][][] t = new long[n][][];
        for (int i = 0; i < n; i++) t[i] = none;
        return t;
    }

    private static Class<?> virtualThreadClass() {
        try {
            return Class.forName("java.lang.VirtualThread", false, null);
        } catch (Throwable e) {
            return null;
        }
    }

    // ---- the hot path

    /** The current thread's slot, or 0 (whose rows are empty) when it owns none. */
    private static int me() {
        Thread t = Thread.currentThread();
        int s = (int) U.getLong(t, TID) & SLOT_MASK;
        return THREADS[s] == t ? s : 0;
    }

    /** The row column of o's class when it is known; otherwise more than any row is long. */
    private static int column(Object o) {
        return column(o.getClass());
    }

    /**
     * A class is looked for in the pair of hash slots {i, i ^ 1} first, where it almost always is: a class whose
     * home slot another took sits next to it, so a collision does not send every allocation of the class the
     * long way.
     */
    private static int column(Class<?> c) {
        int i = System.identityHashCode(c) & CLASS_MASK;
        return CLASSES[i] == c ? COLUMNS[i] : neighbour(c, i);
    }

    private static int neighbour(Class<?> c, int i) {
        int j = i ^ 1;
        return CLASSES[j] == c ? COLUMNS[j] : weakly(c, i);
    }

    /** The same pair of slots, for a class held by a WeakReference (one that can unload). */
    private static int weakly(Class<?> c, int i) {
        return refersTo(CLASSES[i], c) ? COLUMNS[i] : refersTo(CLASSES[i ^ 1], c) ? COLUMNS[i ^ 1] : NONE;
    }

    /** Whether slot content k is a weak key of c (Unsafe reads the referent with the GC's barrier for it). */
    private static boolean refersTo(Object k, Class<?> c) {
        return k instanceof WeakReference && U.getReference(k, REFERENT) == c;
    }

    /**
     * objectAlloc, counting only: one more instance of c. A call, never inlined into the probed code (see "Calls,
     * not inlined" above), and given the class, never the object, which would escape into the call.
     */
    @DontInline
    static void object(Class<?> c) {
        long[] r = CLASS_ROWS[me()];
        int k = column(c);
        if (k < r.length) r[k]++;
        else classSlowly(c, 0);
    }

    /** objectAlloc with live objects sampled per class (depth 0). */
    static void objectSampled(Object o) {
        long[] c = CLASS_ROWS[me()];
        int k = column(o);
        if (k < c.length) tally(o, c, k);
        else objectSlowly(o);
    }

    private static void tally(Object o, long[] c, int k) {
        if (sampled(c[k]++ + c[1])) HeapProxy.tag(o, k >> 1);
    }

    /** objectNew: one more object at `site`. A call, never inlined into the probed code. */
    @DontInline
    static void objectNew(int site) {
        long[] p = page(SITE_PAGES, site);
        if (p != null) p[(site & PAGE_MASK) << 1]++;
        else newSlowly(site);
    }

    /** arrayAlloc: counts the array by class and site, sampling it if live objects are; its bytes. */
    static long array(Object a, int site) {
        long size = arraySize(a);
        if (LIVE) arraySampled(a, size, site);
        else arrayOf(a.getClass(), size, site);
        return size;
    }

    /**
     * array() without live objects: an array of class c and `size` bytes at `site`. A call, never inlined into the
     * probed code, given the class and the size, never the array.
     */
    @DontInline
    private static void arrayOf(Class<?> c, long size, int site) {
        if (!counted(CLASS_ROWS[me()], column(c), size)) classSlowly(c, size);
        siteArray(site, size);
    }

    /** array() with live objects: sampling per class too (so it needs the array). */
    private static void arraySampled(Object a, long size, int site) {
        if (!tallied(a, site, CLASS_ROWS[me()], column(a), size)) arraySlowly(a, site, size);
        siteArray(site, size);
    }

    /**
     * multiArrayAlloc, after arrayAlloc counted the outer array: the sub-arrays the multianewarray made, by class
     * and sampled, at the outer array's site (which counts the outer array only). An element is null or a fresh
     * array.
     */
    static void subArrays(Object a, int site) {
        if (a instanceof Object[] outer) {
            for (Object inner : outer) {
                if (inner != null) {
                    arraySlowly(inner, site, arraySize(inner));
                    subArrays(inner, site);
                }
            }
        }
    }

    private static boolean counted(long[] c, int k, long size) {
        if (k >= c.length) return false;
        c[k]++;
        c[k + 1] += size;
        return true;
    }

    private static boolean tallied(Object a, int site, long[] c, int k, long size) {
        if (k >= c.length) return false;
        sampleArray(a, site, c, k);
        return counted(c, k, size);
    }

    private static void sampleArray(Object a, int site, long[] c, int k) {
        if (sampled(c[k] + c[1])) tagArray(a, site, k >> 1);
    }

    private static void siteArray(int site, long size) {
        long[] p = page(SITE_PAGES, site);
        if (p == null || !counted(p, (site & PAGE_MASK) << 1, size)) siteArraySlowly(site, size);
    }

    /** objectBuilt (live objects by site, depth > 0): an object of `site` finished its constructor. */
    static void built(Object o, int site) {
        long[] p = page(BUILT_PAGES, site);
        if (p != null) tallyBuilt(o, site, p);
        else builtSlowly(o, site);
    }

    private static void tallyBuilt(Object o, int site, long[] p) {
        if (sampled(p[site & PAGE_MASK]++)) HeapProxy.tagSite(o, site);
    }

    /** The current thread's page of `table` that holds `site`; null when it has none yet. */
    private static long[] page(long[][][] table, int site) {
        long[][] d = table[me()];
        int i = site >>> PAGE_SHIFT;
        return i < d.length ? d[i] : null;
    }

    /**
     * Whether the n-th object (of a class, or of a site) is tagged for live tracking: one in liveEvery on
     * average, chosen by a hash of n rather than n % liveEvery, so that a program keeping every k-th object
     * does not bias the estimate. Rows count from a salt per thread (the tid in the high word), so that threads
     * do not all sample the same positions of their own sequences. A compare, not a division.
     */
    private static boolean sampled(long n) {
        return (((n + 1) * 0x9E3779B97F4A7C15L) >>> 32) < BELOW;
    }

    /** An array's bytes, header and padding included. Inlined: for an array of a known type C2 folds the chain. */
    private static long arraySize(Object a) {
        long n;
        int elem;
        if (a instanceof Object[] x) { n = x.length; elem = REF_BYTES; }
        else if (a instanceof int[] x) { n = x.length; elem = 4; }
        else if (a instanceof byte[] x) { n = x.length; elem = 1; }
        else if (a instanceof char[] x) { n = x.length; elem = 2; }
        else if (a instanceof long[] x) { n = x.length; elem = 8; }
        else if (a instanceof double[] x) { n = x.length; elem = 8; }
        else if (a instanceof float[] x) { n = x.length; elem = 4; }
        else if (a instanceof short[] x) { n = x.length; elem = 2; }
        else if (a instanceof boolean[] x) { n = x.length; elem = 1; }
        else return 0;
        return (HEADER + n * elem + 7) & ~7L;
    }

    // ---- the long way: first sight of a class or site by a thread, threads without a slot, the trace

    /**
     * object() and arrayOf() in every case the hot path leaves: one more instance of c (and `bytes`, for an array),
     * counted only. Not inlined, so that the compiled code of those two stays a few loads and an add.
     */
    @DontInline
    private static void classSlowly(Class<?> c, long bytes) {
        int k = columnSlowly(c, null);
        if (k >= 0) addClass(k, bytes);
    }

    /** objectAlloc in every case the hot path leaves: counts, samples (depth 0) and traces. */
    static void objectSlowly(Object o) {
        int k = columnSlowly(o.getClass(), o);
        if (k < 0) return;
        long n = addClass(k, 0);
        if (LIVE && DEPTH == 0 && sampled(n)) HeapProxy.tag(o, k >> 1);
        if (TRACE) HeapProxy.traceObject(o, k >> 1);
    }

    /** Counts an array by class, and samples it. */
    private static void arraySlowly(Object a, int site, long size) {
        int k = columnSlowly(a.getClass(), null);
        if (k < 0) return;
        long n = addClass(k, size);
        if (LIVE && sampled(n)) tagArray(a, site, k >> 1);
    }

    /** Live samples of arrays: per class at depth 0, per site otherwise. */
    private static void tagArray(Object a, int site, int index) {
        if (DEPTH == 0) HeapProxy.tag(a, index);
        else if (site > 0) HeapProxy.tagSite(a, site);
    }

    /**
     * arrayMade: an array a call returned that the VM or the JIT made (an array's clone, Array.newInstance), by
     * class: the counting path of array() without a site.
     */
    static void madeArray(Object a) {
        long size = arraySize(a);
        if (LIVE) {
            if (!tallied(a, 0, CLASS_ROWS[me()], column(a), size)) arraySlowly(a, 0, size);
        } else {
            Class<?> c = a.getClass();
            if (!counted(CLASS_ROWS[me()], column(c), size)) classSlowly(c, size);
        }
    }

    /**
     * superCloned: by method id, 0 while undecided, 1 when the method's super.clone() reaches Object.clone, 2 when
     * a clone() between counts the object. Grown by copying under no lock: a write lost to a race, or read
     * before it is seen, is 0 and is decided again, never wrong. Arrays made here run no probe.
     */
    private static byte[] cloneDecisions = new byte[0];

    static boolean reachesObjectClone(int method, Class<?> start) {
        byte[] d = cloneDecisions;
        int v = method >= 0 && method < d.length ? d[method] : 0;
        return (v == 0 ? decideClone(method, start) : v) == 1;
    }

    @DontInline
    private static int decideClone(int method, Class<?> start) {
        int v = HeapProxy.reachesObjectClone(start) ? 1 : 2;
        if (method < 0) return v;
        byte[] d = cloneDecisions;
        if (method >= d.length) {
            byte[] grown = new byte[method < 2 * d.length ? 2 * d.length : method + 1];
            System.arraycopy(d, 0, grown, 0, d.length);
            d = grown;
        }
        d[method] = (byte) v;
        cloneDecisions = d;
        return v;
    }

    /** vmAlloc: an array the VM made (clone, Array.newInstance, JNI; the VM reports each sub-array itself). */
    static void vmArray(Object a) {
        arraySlowly(a, 0, arraySize(a));
    }

    /**
     * Adds one instance (and `bytes`) at column k of the thread's row, or atomically in the shared row when the
     * thread has none; returns the number to sample on (the count before, plus the row's salt).
     */
    private static long addClass(int k, long bytes) {
        long[] c = classRowSlowly(k);
        if (c == null) {
            if (bytes != 0) shared(SHARED_CLASSES, k + 1, bytes);
            return shared(SHARED_CLASSES, k, 1);
        }
        long n = c[k];
        c[k] = n + 1;
        c[k + 1] += bytes;
        return n + c[1];
    }

    private static void newSlowly(int site) {
        if (!siteOk(site)) return;
        long[] p = pageSlowly(SITE_PAGES, site, 2, false);
        if (p != null) p[(site & PAGE_MASK) << 1]++;
        else shared(SHARED_SITES, site << 1, 1);
    }

    private static void siteArraySlowly(int site, long size) {
        if (!siteOk(site)) return;
        long[] p = pageSlowly(SITE_PAGES, site, 2, false);
        if (p != null) {
            counted(p, (site & PAGE_MASK) << 1, size);
        } else {
            shared(SHARED_SITES, (site << 1) + 1, size);
            shared(SHARED_SITES, site << 1, 1);
        }
    }

    private static void builtSlowly(Object o, int site) {
        if (!siteOk(site) || SHARED_BUILT.length == 0) { dropped(); return; }
        long[] p = pageSlowly(BUILT_PAGES, site, 1, true);
        long n = p != null ? p[site & PAGE_MASK]++ : shared(SHARED_BUILT, site, 1);
        if (sampled(n)) HeapProxy.tagSite(o, site);
    }

    private static boolean siteOk(int site) {
        if (site > 0 && site < MAX_SITES) return true;
        dropped();
        return false;
    }

    /**
     * The row column of class c, assigning it the first time; -1 if the tables are full. `instance`: an instance of
     * c, or null (for a class that is not an array, the agent then sizes one it makes, see assign).
     */
    private static int columnSlowly(Class<?> c, Object instance) {
        int home = System.identityHashCode(c) & CLASS_MASK;
        // A claim lost to another thread starts the search again: that thread may have inserted c itself.
        for (int attempt = 0; attempt < 64; attempt++) {
            int free = -1;
            Object seen = null;
            // Slots in the order home, home ^ 1, home ^ 2...: every slot once, the pair column() looks at first.
            for (int probes = 0; probes <= CLASS_MASK; probes++) {
                int i = home ^ probes;
                Object k = U.getReferenceAcquire(CLASSES, REFS + i * REF_SCALE);
                if (k == c || refersTo(k, c)) {
                    int column = U.getIntAcquire(COLUMNS, INTS + i * INT_SCALE);
                    return column != NONE ? column : assign(i, instance, c);
                }
                if (k == FREED && free < 0) {
                    free = i;
                    seen = k;
                } else if (k == null) {
                    if (free < 0) {
                        free = i;
                        seen = null;
                    }
                    break;
                }
            }
            if (free < 0) break;
            Object key = keyOf(c);
            if (U.compareAndSetReference(CLASSES, REFS + free * REF_SCALE, seen, key)) return assign(free, instance, c);
        }
        dropped();
        return -1;
    }

    /**
     * What the table holds for c: c itself when it can never unload, else a WeakReference to it. The reference is
     * made without its constructor (which carries probes the program did not call) and with the fields the
     * constructor would set; the GC treats it as any WeakReference.
     */
    private static Object keyOf(Class<?> c) {
        Object loader = U.getReference(c, LOADER);
        if ((loader == null || loader == PLATFORM || loader == SYSTEM) && !c.isHidden()) return c;
        if (U.getAndAddLong(WEAK_MADE, LONGS, 1) % SWEEP_EVERY == SWEEP_EVERY - 1) sweep();
        try {
            Object w = U.allocateInstance(WeakReference.class);
            U.putReference(w, QUEUE, NO_QUEUE);
            U.putReferenceRelease(w, REFERENT, c);
            return w;
        } catch (Throwable e) {
            return c; // cannot happen for WeakReference; counting still works, the class just cannot unload
        }
    }

    /**
     * Frees the slots of classes that have unloaded. Their column is unset first, so a class that takes the slot
     * later never finds the old column; nothing looks the dead class up (no instance of it can be allocated).
     */
    private static void sweep() {
        for (int i = 0; i < CLASS_SLOTS; i++) {
            Object k = U.getReferenceAcquire(CLASSES, REFS + i * REF_SCALE);
            if (k instanceof WeakReference && U.getReference(k, REFERENT) == null) {
                U.putIntRelease(COLUMNS, INTS + i * INT_SCALE, NONE);
                U.compareAndSetReference(CLASSES, REFS + i * REF_SCALE, k, FREED);
            }
        }
    }

    /**
     * Gives the class in hash slot i its column, from the dense index the agent keeps for its name. Racing
     * threads get the same index; the first CAS of the column publishes it. The agent records the class's name
     * and instance size before returning the index, so no count can be read without them; given no instance, it
     * sizes one it allocates itself, uncounted and without running a constructor.
     */
    private static int assign(int i, Object o, Class<?> c) {
        long at = INTS + i * INT_SCALE;
        int x = HeapProxy.classIndex(c, o);
        if (x > 0 && x < CLASS_SLOTS) {
            raiseHighestIndex(x);
            int column = x << 1;
            if (U.compareAndSetInt(COLUMNS, at, NONE, column)) return column;
        }
        int column = U.getIntAcquire(COLUMNS, at);
        if (column != NONE) return column;
        dropped();
        return -1;
    }

    private static void raiseHighestIndex(int x) {
        int h;
        while ((h = U.getIntVolatile(HIGHEST_INDEX, INTS)) < x && !U.compareAndSetInt(HIGHEST_INDEX, INTS, h, x)) {}
    }

    /** The current thread's slot, claimed if free; 0 when it cannot have one. */
    private static int slot() {
        Thread t = Thread.currentThread();
        int s = (int) U.getLong(t, TID) & SLOT_MASK;
        if (s == 0) return 0;
        long at = REFS + s * REF_SCALE;
        Object owner = U.getReferenceAcquire(THREADS, at);
        if (owner == t) return s;
        if (owner != null || t.getClass() == VIRTUAL) return 0;
        // The previous owner emptied the rows before releasing the slot (retire), and the CAS orders that.
        return U.compareAndSetReference(THREADS, at, null, t) ? s : 0;
    }

    /** The thread's class row, made or grown to hold column k; null when the thread has no slot. */
    private static long[] classRowSlowly(int k) {
        int s = slot();
        if (s == 0) return null;
        long[] c = CLASS_ROWS[s];
        if (k + 1 < c.length) return c;
        int n = c.length == 0 ? 64 : c.length;
        while (n <= k + 1) n <<= 1;
        long[] bigger = new long[n];
        if (c.length == 0) bigger[1] = salt();
        else System.arraycopy(c, 0, bigger, 0, c.length);
        // Released: a reader summing the rows sees the copied counts with the new row.
        U.putReferenceRelease(CLASS_ROWS, REFS + s * REF_SCALE, bigger);
        return bigger;
    }

    /** The thread's page of `table` for `site`, made if needed (`width` longs per site); null without a slot. */
    private static long[] pageSlowly(long[][][] table, int site, int width, boolean salted) {
        int s = slot();
        if (s == 0) return null;
        long[][] d = table[s];
        int i = site >>> PAGE_SHIFT;
        if (i >= d.length) {
            int n = d.length == 0 ? 8 : d.length;
            while (n <= i) n <<= 1;
            long[][] bigger = new long[n][];
            System.arraycopy(d, 0, bigger, 0, d.length);
            U.putReferenceRelease(table, REFS + s * REF_SCALE, bigger);
            d = bigger;
        }
        long[] p = d[i];
        if (p == null) {
            p = new long[PAGE * width];
            if (salted) {
                long salt = salt();
                for (int j = 0; j < p.length; j++) p[j] = salt;
            }
            U.putReferenceRelease(d, REFS + i * REF_SCALE, p);
        }
        return p;
    }

    /** The current thread's sampling salt: its tid in the high word. */
    private static long salt() {
        return U.getLong(Thread.currentThread(), TID) << 32;
    }

    private static long shared(long[] table, int index, long delta) {
        return U.getAndAddLong(table, LONGS + index * LONG_SCALE, delta);
    }

    /** Adds delta at index of a paged shared table, making its page if it is the first; returns the value before. */
    private static long shared(long[][] pages, int index, long delta) {
        long at = REFS + (index >>> SHARED_PAGE_SHIFT) * REF_SCALE;
        long[] p = (long[]) U.getReferenceAcquire(pages, at);
        if (p == null) {
            long[] made = new long[1 << SHARED_PAGE_SHIFT];
            p = U.compareAndSetReference(pages, at, null, made) ? made : (long[]) U.getReferenceAcquire(pages, at);
        }
        return shared(p, index & SHARED_PAGE_MASK, delta);
    }

    private static void dropped() {
        shared(DROPPED, 0, 1);
    }

    // ---- thread end and the readers (not on any probe path)

    /**
     * Called by the agent (JNI) from JVMTI ThreadEnd, on the ending thread, which runs no more bytecode after it:
     * adds its rows into the shared arrays and frees its slot, so that a program making many short-lived
     * threads keeps rows only for the living ones.
     */
    static void retire() {
        Thread t = Thread.currentThread();
        int s = (int) U.getLong(t, TID) & SLOT_MASK;
        long at = REFS + s * REF_SCALE;
        if (s == 0 || U.getReferenceAcquire(THREADS, at) != t) return;
        synchronized (LOCK) {
            long[] c = CLASS_ROWS[s];
            for (int k = 2; k < c.length; k++) {
                if (c[k] != 0) shared(SHARED_CLASSES, k, c[k]);
            }
            CLASS_ROWS[s] = EMPTY;
            long[][] d = SITE_PAGES[s];
            for (int i = 0; i < d.length; i++) {
                long[] p = d[i];
                if (p == null) continue;
                int first = i << (PAGE_SHIFT + 1);
                for (int j = 0; j < p.length; j++) {
                    if (p[j] != 0) shared(SHARED_SITES, first + j, p[j]);
                }
            }
            SITE_PAGES[s] = NO_PAGES;
            BUILT_PAGES[s] = NO_PAGES;
        }
        U.putReferenceRelease(THREADS, at, null);
    }

    /** Instances and array bytes by row column (2 * index, 2 * index + 1): shared + every row - the reset base. */
    static long[] classTotals() {
        synchronized (LOCK) {
            return minus(classSums(), baseClasses);
        }
    }

    /** Counts and array bytes by 2 * site id and 2 * site id + 1, as classTotals. */
    static long[] siteTotals() {
        synchronized (LOCK) {
            return minus(siteSums(), baseSites);
        }
    }

    /** Counts from here on: the current sums become the base the totals are counted from. */
    static void reset() {
        synchronized (LOCK) {
            baseClasses = classSums();
            baseSites = siteSums();
        }
    }

    private static long[] minus(long[] sums, long[] base) {
        if (base != null) {
            // The tables only grow, so a later sum is at least as long as the base.
            for (int i = 0; i < sums.length && i < base.length; i++) sums[i] -= base[i];
        }
        return sums;
    }

    private static long[] classSums() {
        int n = Math.min(SHARED_CLASSES.length, 2 * (U.getIntVolatile(HIGHEST_INDEX, INTS) + 1));
        long[] out = new long[n];
        for (int i = 0; i < n; i++) out[i] = U.getLongVolatile(SHARED_CLASSES, LONGS + i * LONG_SCALE);
        for (int s = 1; s < SLOTS; s++) {
            long[] c = (long[]) U.getReferenceAcquire(CLASS_ROWS, REFS + s * REF_SCALE);
            for (int k = 2; k < c.length && k < n; k++) out[k] += c[k];
        }
        return out;
    }

    private static long[] siteSums() {
        // As long as the highest page any table made: sites above it were never counted.
        int pages = lastPage(SHARED_SITES) + 1;
        for (int s = 1; s < SLOTS; s++) {
            long[][] d = (long[][]) U.getReferenceAcquire(SITE_PAGES, REFS + s * REF_SCALE);
            pages = Math.max(pages, d.length);
        }
        long[] out = new long[pages << SHARED_PAGE_SHIFT];
        for (int i = 0; i < SHARED_SITES.length && i < pages; i++) {
            long[] p = (long[]) U.getReferenceAcquire(SHARED_SITES, REFS + i * REF_SCALE);
            if (p == null) continue;
            int first = i << SHARED_PAGE_SHIFT;
            for (int j = 0; j < p.length; j++) out[first + j] = U.getLongVolatile(p, LONGS + j * LONG_SCALE);
        }
        for (int s = 1; s < SLOTS; s++) {
            long[][] d = (long[][]) U.getReferenceAcquire(SITE_PAGES, REFS + s * REF_SCALE);
            for (int i = 0; i < d.length; i++) {
                long[] p = (long[]) U.getReferenceAcquire(d, REFS + i * REF_SCALE);
                if (p == null) continue;
                int first = i << (PAGE_SHIFT + 1);
                for (int j = 0; j < p.length; j++) out[first + j] += p[j];
            }
        }
        return out;
    }

    private static int lastPage(long[][] pages) {
        for (int i = pages.length - 1; i >= 0; i--) {
            if (U.getReferenceAcquire(pages, REFS + i * REF_SCALE) != null) return i;
        }
        return -1;
    }

    /** Slots owned by a thread: the threads holding rows (the threads that ended hold none). */
    static int rowsHeld() {
        int n = 0;
        for (int s = 1; s < SLOTS; s++) {
            if (U.getReferenceAcquire(THREADS, REFS + s * REF_SCALE) != null) n++;
        }
        return n;
    }

    /** The dense index of class c, or -1 if no instance of it has been counted. */
    static int indexOf(Class<?> c) {
        if (c == null) return -1;
        int home = System.identityHashCode(c) & CLASS_MASK;
        for (int probes = 0; probes <= CLASS_MASK; probes++) {
            int i = home ^ probes;
            Object k = CLASSES[i];
            if (k == c || refersTo(k, c)) {
                int column = COLUMNS[i];
                return column == NONE ? -1 : column >> 1;
            }
            if (k == null) return -1;
        }
        return -1;
    }

    /** Slots holding a class (live ones; freed slots excluded): for the tests' bound on the table. */
    static int classSlotsHeld() {
        int n = 0;
        for (int i = 0; i < CLASS_SLOTS; i++) {
            Object k = CLASSES[i];
            if (k != null && k != FREED) n++;
        }
        return n;
    }
}
