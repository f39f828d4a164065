/*
 * A test stand-in for the agent's HeapProxy: it only counts, in Java. Tests compile it into java.base with
 *   javac --patch-module java.base=test-classes/proxy -d OUT test-classes/proxy/java/lang/HeapProxy.java
 * and run rewritten classes with --patch-module java.base=OUT (plus a rewritten java/lang/Object.class when
 * objects are counted).
 *
 * Every probe can run inside any method of any class, java.base included, and Object.<init> calls it for every
 * object. So nothing here may allocate an object or call a JDK method that could be instrumented: counters live
 * in arrays sized up front (arrays do not run Object.<init>, and this class is never instrumented), lookups are
 * open-addressed by identity hash, and the only JDK calls are natives (getClass, identityHashCode,
 * Thread.currentThread is not needed). Locking is on HeapProxy.class (synchronized static methods): a monitor
 * allocates no Java object.
 */
package java.lang;

public final class HeapProxy {
    private HeapProxy() {}

    /*
     * Counting starts at the first reset(). Until then every probe returns at once: probes also run while the VM
     * boots (in java.base, when it is rewritten), before even Class.isArray can be called.
     */
    private static boolean ready;

    private static final int CLASS_SLOTS = 1 << 14;
    private static final Class<?>[] classes = new Class<?>[CLASS_SLOTS];
    private static final long[] instances = new long[CLASS_SLOTS];

    private static final int MAX_IDS = 1 << 18;
    private static final long[] enters = new long[MAX_IDS];
    private static final long[] exits = new long[MAX_IDS];
    private static final long[] unwinds = new long[MAX_IDS];
    private static final long[] sites = new long[MAX_IDS];
    private static final long[] built = new long[MAX_IDS];
    private static long dropped;

    // ---- the probes, both flavours (the test proxy has no natives, so they behave the same)

    public static void earlyObjectAlloc(Object o) { objectAlloc(o); }
    public static void earlyArrayAlloc(Object a, int site) { arrayAlloc(a, site); }
    public static void earlyMultiArrayAlloc(Object a, int site) { multiArrayAlloc(a, site); }
    public static void earlyArrayMade(Object a) { arrayMade(a); }
    public static void earlySuperCloned(Object o, int method, Class<?> start) { superCloned(o, method, start); }
    public static void earlyMethodEnter(int id) { methodEnter(id); }
    public static void earlyMethodExit(int id) { methodExit(id); }
    public static void earlyMethodUnwind(int id) { methodUnwind(id); }
    public static void earlyObjectNew(int site) { objectNew(site); }
    public static void earlyObjectBuilt(Object o, int site) { objectBuilt(o, site); }
    public static void earlyCountCall(int id) { countCall(id); }
    public static void earlyCountUnwind(int id) { countUnwind(id); }

    public static synchronized void objectAlloc(Object o) {
        if (ready) countInstance(o.getClass());
    }

    /** After a newarray or anewarray: no sub-arrays (an anewarray's elements are null). */
    public static synchronized void arrayAlloc(Object a, int site) {
        if (!ready) return;
        if (site > 0 && site < MAX_IDS) sites[site]++; else dropped++;
        countInstance(a.getClass());
    }

    /** After a multianewarray: the outer array counts at the site, its sub-arrays by class too. */
    public static synchronized void multiArrayAlloc(Object a, int site) {
        if (!ready) return;
        if (site > 0 && site < MAX_IDS) sites[site]++; else dropped++;
        countArray(a);
    }

    /** After a call that returned an array the VM made (an array's clone, Array.newInstance): by class only. */
    public static synchronized void arrayMade(Object a) {
        if (ready) countInstance(a.getClass());
    }

    /**
     * After super.clone() in a class whose superclass is not Object: the object, by class, when the call reached
     * Object.clone (no class from `start` up declares a clone() of its own). Decided by reflection, which makes
     * objects of its own, so counting pauses while it runs: the exception to "nothing here allocates", paid
     * only by this rare probe.
     */
    public static synchronized void superCloned(Object o, int method, Class<?> start) {
        if (!ready) return;
        ready = false;
        boolean reaches;
        try {
            reaches = reachesObjectClone(start);
        } finally {
            ready = true;
        }
        if (reaches) countInstance(o.getClass());
    }

    private static boolean reachesObjectClone(Class<?> c) {
        for (; c != null && c != Object.class; c = c.getSuperclass()) {
            for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                int hidden = java.lang.reflect.Modifier.STATIC | java.lang.reflect.Modifier.PRIVATE;
                if (m.getName().equals("clone") && m.getParameterCount() == 0 && m.getReturnType() == Object.class
                        && (m.getModifiers() & hidden) == 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /** After a `new`: counted per site, like arrays (the object itself is counted by objectAlloc). */
    public static synchronized void objectNew(int site) {
        if (!ready) return;
        if (site > 0 && site < MAX_IDS) sites[site]++; else dropped++;
    }

    /** After the constructor of an object from a `new` site (live tracking): counted per site. */
    public static synchronized void objectBuilt(Object o, int site) {
        if (!ready) return;
        if (o == null) throw new AssertionError("objectBuilt(null)");
        if (site > 0 && site < MAX_IDS) built[site]++; else dropped++;
    }

    public static synchronized void methodEnter(int id) {
        if (ready) bump(enters, id);
    }

    public static synchronized void methodExit(int id) {
        if (ready) bump(exits, id);
    }

    public static synchronized void methodUnwind(int id) {
        if (ready) bump(unwinds, id);
    }

    /** Counted-only methods (rewrite-class --calls counts, and leaves under --calls times): no exit probe. */
    public static synchronized void countCall(int id) {
        if (ready) bump(enters, id);
    }

    public static synchronized void countUnwind(int id) {
        if (ready) bump(unwinds, id);
    }

    // ---- reading and resetting, for test programs (call through reflection or directly)

    /** Instances (objects or arrays) of exactly this class counted since the last reset. */
    public static synchronized long count(Class<?> c) {
        int i = slot(c, false);
        return i < 0 ? 0 : instances[i];
    }

    public static synchronized long enters(int id) { return id > 0 && id < MAX_IDS ? enters[id] : 0; }
    public static synchronized long exits(int id) { return id > 0 && id < MAX_IDS ? exits[id] : 0; }
    public static synchronized long unwinds(int id) { return id > 0 && id < MAX_IDS ? unwinds[id] : 0; }
    public static synchronized long site(int id) { return id > 0 && id < MAX_IDS ? sites[id] : 0; }
    public static synchronized long built(int id) { return id > 0 && id < MAX_IDS ? built[id] : 0; }
    public static synchronized long dropped() { return dropped; }

    public static synchronized void reset() {
        for (int i = 0; i < CLASS_SLOTS; i++) { instances[i] = 0; }
        for (int i = 0; i < MAX_IDS; i++) { enters[i] = 0; exits[i] = 0; unwinds[i] = 0; sites[i] = 0; built[i] = 0; }
        dropped = 0;
        ready = true;
    }

    /**
     * Every non-zero method counter as "id enters exits unwinds" lines, each site as "site id n". The text is
     * built only after the counters are copied, so building it does not change what it reports.
     */
    public static String methodReport() {
        long[] e, x, u, s;
        synchronized (HeapProxy.class) {
            e = enters.clone(); x = exits.clone(); u = unwinds.clone(); s = sites.clone();
        }
        StringBuilder b = new StringBuilder();
        for (int i = 1; i < MAX_IDS; i++) {
            if (e[i] != 0 || x[i] != 0 || u[i] != 0) {
                b.append("method ").append(i).append(' ').append(e[i]).append(' ').append(x[i]).append(' ').append(u[i]).append('\n');
            }
            if (s[i] != 0) b.append("site ").append(i).append(' ').append(s[i]).append('\n');
        }
        return b.toString();
    }

    // ---- internals

    private static void bump(long[] table, int id) {
        if (id > 0 && id < MAX_IDS) table[id]++; else dropped++;
    }

    /* multianewarray reports the outer array only; its sub-arrays exist already, so they are walked here. */
    private static void countArray(Object a) {
        countInstance(a.getClass());
        if (a instanceof Object[] outer && outer.getClass().getComponentType().isArray()) {
            for (Object inner : outer) {
                if (inner != null) countArray(inner);
            }
        }
    }

    private static void countInstance(Class<?> c) {
        int i = slot(c, true);
        if (i >= 0) instances[i]++; else dropped++;
    }

    private static int slot(Class<?> c, boolean add) {
        int mask = CLASS_SLOTS - 1;
        int i = System.identityHashCode(c) & mask;
        for (int probes = 0; probes < CLASS_SLOTS; probes++, i = (i + 1) & mask) {
            Class<?> k = classes[i];
            if (k == c) return i;
            if (k == null) {
                if (!add) return -1;
                classes[i] = c;
                return i;
            }
        }
        return -1;
    }
}
