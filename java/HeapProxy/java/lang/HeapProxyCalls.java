/*
 * The method-call half of the probes: HeapProxy.methodEnter/methodExit/methodUnwind delegate here. libinstr.so
 * defines this class in java.base beside HeapProxy, in the early VM_START phase, and engages it at VM_INIT just
 * before HeapProxy (docs/ARCHITECTURE.md, "Method calls").
 *
 * Per thread (a slot: the thread's Thread.tid itself when it is small, see slot(); tid is read with Unsafe, one
 * load whatever the Thread's monitor state) the probes add plainly into the thread's own long[]: no atomic
 * instruction, no lock and no shared written cache line on the hot path. Two modes, chosen by the agent option
 * calls=counts|times and fixed when the class initialises (static finals, so the JIT drops the other mode's code):
 *  - counts: per thread and method id, calls (entries) and exceptional exits. Normal exits are not counted:
 *    the exit probe is empty, so a call costs one plain add.
 *  - times: per thread a shadow stack and a calling-context tree (CCT): a node per distinct call path, holding
 *    its calls, exclusive wall time and exclusive thread CPU time. Everything else (per-method counts, normal
 *    exits, inclusive times, caller->callee edges, collapsed stacks) is derived from the trees by the agent.
 *    Methods the rewriter marks counted-only (leaves, or every method in counts mode) call enter/unwind.
 *
 * Time: every enter or exit closes a segment (the clock's time since the previous event of the thread) and
 * charges it to the node on top of the shadow stack (or to the root node, "outside instrumented code"). Thread
 * CPU time is a syscall, so it is read only every INTERVAL_NS of wall time per thread (and when a thread is first
 * seen): the CPU time of the interval is apportioned over the nodes charged in it, in proportion to their wall
 * time, rounding down. The exclusive CPU times of a thread therefore add up to at most the CPU time measured for
 * it; what the thread did after its last reading (less than one interval of wall time) is apportioned by the
 * agent at exit with the thread's average CPU/wall ratio (docs/REPORTS.md, "Tolerance").
 *
 * The shadow stack repairs itself: an exit whose id is not on top pops down to the nearest frame with that id
 * (the frames above lost their exits, e.g. to an asynchronous exception delivered inside a probe), and an exit
 * whose id is not on the stack at all is counted and ignored.
 *
 * Rules (the probes run inside every instrumented method, java.base included): allocate no object (arrays are
 * allowed: they are made only when a thread is first seen or a table grows), throw nothing, call no JDK method
 * that could carry a probe (only Thread.currentThread, System.nanoTime, System.identityHashCode,
 * System.arraycopy, Unsafe, and this class's natives). Unlike HeapProxy's, this class's <clinit> does work
 * (reads the agent's settings and makes the tables): nothing can reach this class before the agent's engage()
 * call initialises it at VM_INIT, since HeapProxy delegates here only once engaged, and every probe that runs
 * during that initialisation is an early one, which HeapProxy still turns away.
 */
package java.lang;

import jdk.internal.misc.Unsafe;
import jdk.internal.vm.annotation.DontInline;

public final class HeapProxyCalls {
    private HeapProxyCalls() {}

    /**
     * The agent's settings, read once when the class initialises (the agent triggers that from VM_INIT by
     * calling engage()): [0] times mode, [1] clock address (0: System.nanoTime), [2] method ids limit,
     * [3] direct thread slots, [4] all thread slots, [5..8] Unsafe's long[] and Object[] base and scale.
     * Everything the probes read is a static final, so the JIT folds the mode checks away and reads the
     * tables without loading their references first.
     */
    private static final long[] SETTINGS = settings();
    private static final Unsafe U = Unsafe.getUnsafe();
    private static final long LONGS = SETTINGS[5];
    private static final long LONG_SCALE = SETTINGS[6];
    private static final long REFS = SETTINGS[7];
    private static final long REF_SCALE = SETTINGS[8];

    /** times mode: per-thread shadow stacks and trees; otherwise counts only. */
    static final boolean TIMED = SETTINGS[0] != 0;

    /**
     * The wall clock of times mode: the address of a nanosecond counter that an agent thread advances every
     * TICK (agent/src/calls.rs), read with one load; 0: System.nanoTime at every event (clock=exact).
     */
    private static final long CLOCK = SETTINGS[1];

    /** The rewriter's limit of method ids; the per-thread tables grow up to it. */
    private static final int MAX_IDS = (int) SETTINGS[2];

    /** Slots [0, DIRECT) belong to the threads of those tids; the rest is claimed by larger tids. */
    private static final int DIRECT = (int) SETTINGS[3];

    /** Offset of Thread.tid, the key of a thread's slot: a constant, so reading it is a plain field load. */
    private static final long TID = U.objectFieldOffset(Thread.class, "tid");

    /**
     * [0]: ids out of range (not counted); [1]: events of threads without a slot (counted in the shared rows, not
     * timed); [2]: frames beyond the tree limit; [3]: entries that took countCall's slow branch (a thread's first
     * call when it was not adopted at its start, a row that had to be lengthened by its thread, threads without a
     * direct slot): what enterRowLength is there to keep at 0.
     */
    private static final long[] dropped = new long[4];

    // ---- per thread, by slot

    /**
     * The slot table: Thread.tid of the owner (-1: never used; FREED: an overflow slot its thread gave back at its
     * end). A Thread whose constructor has not yet assigned its tid (0: a thread the VM attaches runs probes
     * inside its own constructor) gets no slot. Slot 0 belongs to no thread: it holds the rows and the tree of
     * the threads that ended (retire()), written under LOCK only.
     */
    private static final long[] tids = unowned((int) SETTINGS[4]);
    private static final long FREED = -2;
    private static final Thread[] owners = new Thread[tids.length];
    /**
     * Per thread, by method id: entries and exceptional exits (times mode: entries only of the frames the tree
     * could not hold; the tree counts the rest).
     */
    static final long[][] enters = new long[tids.length][];
    /**
     * The length a thread's row of `enters` gets when it is made: every method id given out fits (reserve()). So
     * countCall finds its row long enough and, once threads are adopted at their start (adopt()), never takes its
     * slow branch; a branch ever taken is compiled by C2 as a real call into every method it inlines countCall
     * into, which made sunflow's compiled code 2.5 times larger (bench/README.md, 2026-11-27). Written under LOCK.
     */
    private static int enterRowLength = 1024;
    /**
     * Per slot, the rows of `enters` that reserve() replaced with longer ones. Their thread may still have been
     * adding to one as it was replaced, so they are never copied into the new row: readers add them to it.
     */
    private static final long[][][] replacedEnters = new long[tids.length][][];
    /** Direct slots whose thread ended (retire()): reserve() lengthens no row of theirs. */
    private static final boolean[] ended = new boolean[DIRECT];
    private static final long[][] unwinds = new long[tids.length][];
    private static final int TIMED_SLOTS = TIMED ? tids.length : 0;
    /** The tree: NODE fields per node; node 0 is the root (method 0, "outside instrumented code"). */
    private static final long[][] nodes = new long[TIMED_SLOTS][];
    /**
     * The children of the tree's nodes, open addressing: entry i is [2i] = parent base << 32 | method id (never
     * 0: ids start at 1) and [2i + 1] = the child's base, on one cache line. At most a quarter full, so most
     * keys sit in the slot they hash to, which is all the fast path looks at.
     */
    private static final long[][] children = new long[TIMED_SLOTS][];
    /** Nodes charged since the last CPU reading. */
    private static final int[][] touched = new int[TIMED_SLOTS][];
    private static final long[][] states = new long[TIMED_SLOTS][];

    // Node fields. PARENT_METHOD: parent << 32 | method id. LAST_CHILD: method id << 32 | base of the child
    // made last (a one-entry cache in front of the hash table). LOST: frames popped by a repair.
    static final int NODE = 8;
    static final int PARENT_METHOD = 0, CALLS = 1, SELF_WALL = 2, SELF_CPU = 3, PENDING = 4, LAST_CHILD = 5,
            LOST = 6;

    // State fields.
    static final int STATE = 16;
    static final int DEPTH = 0, LAST = 1, READ_WALL = 2, READ_CPU = 3, NODES = 4, TOUCHED = 5, REPAIRED = 6,
            UNMATCHED = 7, SKIPPING = 8, FIRST_WALL = 9, FIRST_CPU = 10, READS = 11, TRUNCATED = 12,
            PARKED_LAST = 13;

    /**
     * Threads without a slot (more than the overflow slots alive at once, or a tid not yet assigned) count here,
     * by method id, with atomic adds: exact, only slower, and untimed. Pages of PAGE ids, made by CAS on first
     * use and never replaced (an add into a page being replaced could be lost). Exits: times mode only.
     */
    private static final int PAGE_SHIFT = 10;
    private static final int PAGE = 1 << PAGE_SHIFT;
    private static final long[][] sharedEnters = new long[(MAX_IDS + PAGE - 1) >> PAGE_SHIFT][];
    private static final long[][] sharedUnwinds = new long[sharedEnters.length][];
    private static final long[][] sharedExits = new long[TIMED ? sharedEnters.length : 0][];

    /**
     * Held by retire() (which moves an ending thread's counts to slot 0), by the readers of this class and by
     * the agent's report (JNI MonitorEnter), so that each count is read exactly once.
     */
    private static final long[] LOCK = new long[0];

    static final long INTERVAL_NS = 1_000_000L;
    static final long OUTERMOST_READ_NS = 50_000L;
    static final int MAX_DEPTH = 1 << 16;
    static final int MAX_NODES = 1 << 22;

    private static long[] unowned(int n) {
        long[] t = new long[n];
        for (int i = 0; i < n; i++) t[i] = -1;
        return t;
    }

    /**
     * Called by the agent (JNI) at VM_INIT, before HeapProxy.engage; the first call initialises the class.
     * Binds the native now: the VM looks a native up through Java code (ClassLoader.findNative), which may
     * carry probes; bound later, from inside a probe, that lookup would recurse.
     */
    static void engage() {
        cpuNow();
        adopt();
    }

    /**
     * Gives the current thread its slot and rows before its first probe runs: called for the thread that engages
     * and, by the agent's ThreadStart, for every thread started after it (agent/src/calls.rs).
     */
    static void adopt() {
        if (MAX_IDS >= 2 && U.getLong(Thread.currentThread(), TID) > 0) slot();
    }

    /**
     * The rewriter has given out method ids below `ids`: every thread's row of `enters` is made long enough now,
     * before any method with such an id can run (the agent calls this from ClassFileLoadHook). A row is replaced,
     * not copied, since its thread may be adding to it meanwhile (replacedEnters). Returns the rows' length.
     */
    static int reserve(int ids) {
        synchronized (LOCK) {
            int n = enterRowLength;
            while (n < ids && n < MAX_IDS) n *= 2;
            if (n == enterRowLength) return n;
            enterRowLength = n;
            for (int s = 1; s < enters.length; s++) {
                long[] c = enters[s];
                if (c != null && c.length < n && !(s < DIRECT && ended[s])) replaceEnters(s, n);
            }
            return n;
        }
    }

    /** Under LOCK: slot s's row of `enters` becomes a new one of length n, the old one kept in replacedEnters. */
    private static void replaceEnters(int s, int n) {
        long[][] was = replacedEnters[s];
        int k = was == null ? 0 : was.length;
        long[][] now = new long[k + 1][];
        for (int i = 0; i < k; i++) now[i] = was[i];
        now[k] = enters[s];
        replacedEnters[s] = now;
        enters[s] = new long[n];
    }

    // ---- the probes (through HeapProxy.countCall/countUnwind and methodEnter/methodExit/methodUnwind)
    //
    // Counts mode's probes and the methods they call are each at most 35 bytes of bytecode (MaxInlineSize),
    // so that C1 inlines them as well as C2 (C1 allows only 24 bytes three calls deep, so a probe inside an
    // inlined method may still be a call there): a probe that C1 calls for real (a 60-byte one did) costs a
    // call per event for as long as a method runs in C1 code. Everything rare is in the *Slowly methods.

    // Ids are positive: the rewriter numbers methods from 1. (Checking for a negative one would take the
    // probes past 35 bytes.)

    // Counts mode's entry probe is HeapProxy.countCall itself, on `enters`, `mine` and `enterSlowly`.

    /** Counts mode's unwind probe (exceptional exits). */
    @DontInline
    static void unwind(int id) {
        long[] c = mine(unwinds);
        if (c != null && id < c.length) c[id]++;
        else unwindSlowly(id);
    }

    @DontInline
    static void enterSlowly(int id) {
        add(dropped, 3);
        countSlowly(enters, id);
    }
    @DontInline
    private static void unwindSlowly(int id) { countSlowly(unwinds, id); }

    /**
     * The current thread's own row of `table` (slot s), made long enough for `id`. Copied, since only this
     * thread adds to it; under LOCK, since reserve() may be replacing it.
     */
    private static long[] lengthened(long[][] table, int s, int id) {
        synchronized (LOCK) {
            long[] c = table[s];
            if (id < c.length) return c;
            long[] bigger = grown(c, id);
            table[s] = bigger;
            return bigger;
        }
    }

    /** The current thread's row of `table` in the common case (a small tid with its slot made); else null. */
    static long[] mine(long[][] table) {
        long tid = U.getLong(Thread.currentThread(), TID);
        return tid < DIRECT ? table[(int) tid] : null;
    }

    /**
     * Counts an event in the current thread's row of `table` the long way (claims a slot, grows the row);
     * returns the slot, or -1 when the event could not be counted.
     */
    private static int countSlowly(long[][] table, int id) {
        if (id <= 0 || id >= MAX_IDS) { add(dropped, 0); return -1; }
        // In times mode only an entry claims a slot: a frame entered without one must also end without one,
        // in the shared rows, or its exit would reach a new tree that never saw the frame (an unmatched exit).
        int s = TIMED && table != enters ? found() : slot();
        if (s < 0) {
            shared(table == enters ? sharedEnters : sharedUnwinds, id);
            return -1;
        }
        long[] c = table[s];
        if (id >= c.length) c = lengthened(table, s, id);
        c[id]++;
        return s;
    }

    // Times mode's probes. Calls are counted by the tree (a node's CALLS), so the fast paths touch only
    // the thread's state array and its tree; the rows count only exceptional exits and the calls of frames
    // the tree could not hold (SKIPPING). Normal exits are derived by the agent: every frame ends by exactly
    // one of an exit, an unwind (counted), a repair (a node's LOST), or is still on the stack at the end.

    // Inlining. Every method on the fast paths is at most 35 bytes of bytecode, which C2 inlines at any call
    // site it has seen run (a bigger one only where the call is hot) and C1 at the first two levels; the slow
    // paths are @DontInline (HotSpot honours it in a class the boot loader defines), so that CPU readings and
    // tree growth are not compiled into every application method, which would then outgrow InlineSmallCode
    // and no longer be inlined itself. Forcing the fast paths inline (@ForceInline) was measured slower (it
    // doubled C1's code); one method per fast path measured the same overall (docs/ARCHITECTURE.md, "Inlining").

    static void timedEnter(int id) {
        long[] st = mine(states);
        if (st == null || !enterQuickly(st, mine(nodes), id)) timedEnterSlowly(id);
    }

    static void timedExit(int id) {
        long[] st = mine(states);
        if (st == null || !exitQuickly(st, id)) timedExitSlowly(id, false);
    }

    @DontInline
    static void timedUnwind(int id) {
        timedExitSlowly(id, true);
    }

    /**
     * The common entry: the stack has room, the child node exists and is found without a search, and the
     * clock has not ticked since the thread's previous event (no time to charge; a skipping thread's LAST
     * never matches). The clock is read last: its volatile load keeps the JIT from reusing loads across it.
     */
    private static boolean enterQuickly(long[] st, long[] n, int id) {
        return enterAt(st, (int) st[DEPTH], n, id);
    }

    private static boolean enterAt(long[] st, int d, long[] n, int id) {
        return STATE + d < st.length && pushKnown(st, d, n, knownChild(n, top(st, d), id), id);
    }

    private static boolean pushKnown(long[] st, int d, long[] n, int c, int id) {
        return c > 0 && now() == st[LAST] && pushed(st, d, n, c, id);
    }

    // Node bases need no bounds check: every base in a stack frame, a LAST_CHILD or the children table was
    // made by child() after nodes[s] had grown to hold it, and nodes[s] never shrinks.
    private static boolean pushed(long[] st, int d, long[] n, int c, int id) {
        n[c + CALLS]++;
        st[STATE + d] = (long) c << 32 | id;
        st[DEPTH] = d + 1;
        return true;
    }

    /**
     * The child (its base) of the node at base `b` for method `id` when it is the one that node made last,
     * or sits in the slot its key hashes to; else -1.
     */
    private static int knownChild(long[] n, int b, int id) {
        long cached = n[b + LAST_CHILD];
        return (int) (cached >>> 32) == id ? (int) cached : hashedChild(b, id);
    }

    private static int hashedChild(int b, int id) {
        return hashed(mine(children), (long) b << 32 | id);
    }

    private static int hashed(long[] h, long key) {
        int i = slotOf(key, h.length);
        return h[i] == key ? (int) h[i + 1] : -1;
    }

    /** The even index where `key` is looked for first in a children table of `length` longs. */
    private static int slotOf(long key, int length) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 40) & (length - 2);
    }

    /**
     * The common exit: no time to charge, the frame on top is this method's, and, if it is the outermost, no
     * CPU reading is due.
     */
    private static boolean exitQuickly(long[] st, int id) {
        return now() == st[LAST] && pop(st, (int) st[DEPTH], id);
    }

    // Leaving the outermost frame takes the full path when the CPU clock is due to be read (exitFully).
    private static boolean pop(long[] st, int d, int id) {
        return (d > 1 || d == 1 && !cpuDue(st)) && popped(st, d, id);
    }

    private static boolean cpuDue(long[] st) {
        return st[LAST] - st[READ_WALL] >= OUTERMOST_READ_NS;
    }

    private static boolean popped(long[] st, int d, int id) {
        if (STATE + d > st.length || (int) st[STATE + d - 1] != id) return false;
        st[DEPTH] = d - 1;
        return true;
    }

    @DontInline
    private static void timedEnterSlowly(int id) {
        if (id <= 0 || id >= MAX_IDS) { add(dropped, 0); return; }
        int s = slot();
        if (s < 0) shared(sharedEnters, id);
        else enterFully(s, id, now());
    }

    @DontInline
    private static void timedExitSlowly(int id, boolean unwind) {
        int s = unwind ? countSlowly(unwinds, id) : found();
        if (s >= 0) exitFully(s, id, now());
        else if (!unwind && id > 0 && id < MAX_IDS) shared(sharedExits, id);
    }

    // ---- natives (libinstr.so, agent/src/calls.rs)

    /** The settings (SETTINGS); all off when the agent has none (the class initialised without it). */
    private static native long[] settings();

    /** CPU time of the current thread, nanoseconds (clock_gettime(CLOCK_THREAD_CPUTIME_ID)). */
    private static native long cpuNow();

    /** Ids of the instrumented methods of class `cls` (Java name) named `name` (and `descriptor`, unless null). */
    public static native int[] methodIds(String cls, String name, String descriptor);

    /** Whether the rules give method probes to some method of class `cls` (Java name). */
    public static native boolean classSelected(String cls);

    /** Array-site ids in the method `cls.name` at source line `line` (any line when line < 0). */
    public static native int[] siteIds(String cls, String name, int line);

    /** "counts", "times", or "off" when the rules have no method probes. */
    public static String mode() {
        return MAX_IDS < 2 ? "off" : TIMED ? "times" : "counts";
    }

    // ---- for instr.Counts (the test API); not on any probe path

    /** Calls (entries) of `cls.name[descriptor]` in all threads so far; -1 if no such method has probes. */
    public static long calls(String cls, String name, String descriptor) {
        return sum(callCounts(), methodIds(cls, name, descriptor));
    }

    /** Entries by method id, summed over all threads (a new array), for the test API's snapshots. */
    public static long[] callCounts() {
        synchronized (LOCK) {
            return callCountsLocked();
        }
    }

    private static long[] callCountsLocked() {
        long[] shared = flat(sharedEnters);
        long[] out = new long[1];
        for (int pass = 0; pass < 2; pass++) {
            // The first pass finds the largest id, the second adds.
            int used = 1;
            for (int s = 0; s < enters.length; s++) {
                long[] c = enters[s];
                if (c == null) continue;
                used = Math.max(used, c.length);
                if (pass == 0) continue;
                for (int id = 1; id < c.length; id++) out[id] += c[id];
                long[][] replaced = replacedEnters[s];
                if (replaced != null) for (long[] r : replaced) for (int id = 1; id < r.length; id++) out[id] += r[id];
            }
            for (int s = 0; s < TIMED_SLOTS; s++) {
                long[] n = nodes[s];
                long[] st = states[s];
                if (n == null || st == null) continue;
                long made = Math.min(st[NODES], n.length / NODE);
                for (int b = NODE; b < made * NODE; b += NODE) {
                    int id = (int) n[b + PARENT_METHOD];
                    if (id <= 0) continue;
                    used = Math.max(used, id + 1);
                    if (pass == 1 && id < out.length) out[id] += n[b + CALLS];
                }
            }
            if (pass == 0) out = new long[used];
        }
        for (int id = 1; id < out.length && id < shared.length; id++) out[id] += shared[id];
        for (int id = out.length; id < shared.length; id++) {
            if (shared[id] != 0) { out = grown(out, id); out[id] = shared[id]; }
        }
        return out;
    }

    /** Sum of `counts` over `ids`; -1 when `ids` is empty or null. */
    public static long sum(long[] counts, int[] ids) {
        if (ids == null || ids.length == 0) return -1;
        long n = 0;
        for (int id : ids) if (counts != null && id > 0 && id < counts.length) n += counts[id];
        return n;
    }

    /** Zeroes the per-thread call counts and times (other threads may be running meanwhile). */
    public static void reset() {
        synchronized (LOCK) {
            resetLocked();
        }
    }

    private static void resetLocked() {
        for (long[][] table : new long[][][] { enters, unwinds, sharedEnters, sharedUnwinds, sharedExits }) {
            for (long[] c : table) {
                if (c != null) for (int i = 0; i < c.length; i++) c[i] = 0;
            }
        }
        for (long[][] replaced : replacedEnters) {
            if (replaced == null) continue;
            for (long[] c : replaced) for (int i = 0; i < c.length; i++) c[i] = 0;
        }
        long[][] all = nodes;
        if (all == null) return;
        for (long[] n : all) {
            if (n == null) continue;
            for (int b = 0; b + NODE <= n.length; b += NODE) {
                n[b + CALLS] = 0;
                n[b + SELF_WALL] = 0;
                n[b + SELF_CPU] = 0;
                n[b + LOST] = 0;
            }
        }
    }

    // ---- times mode

    // Per thread, states[s] holds the STATE fields, then the shadow stack: frame k at [STATE + k], as
    // base << 32 | method id, where base = node * NODE is where the node's fields start in nodes[s].

    private static void enterFully(int s, int id, long now) {
        long[] st = states[s];
        if (st[SKIPPING] > 0) { st[SKIPPING]++; countSlowly(enters, id); return; }
        int d = (int) st[DEPTH];
        if (d < 0) { st[DEPTH] = 0; d = 0; }
        long[] n = nodes[s];
        int b = top(st, d);
        charge(s, st, n, b, now);
        if (STATE + d >= st.length) {
            st = growStack(s);
            if (st == null) { startSkipping(s, id); return; }
        }
        int c;
        if ((int) (n[b + LAST_CHILD] >>> 32) == id) {
            c = (int) n[b + LAST_CHILD];
        } else {
            c = child(s, b, id);
            if (c < 0) { add(dropped, 2); startSkipping(s, id); return; }
            n = nodes[s];
            n[b + LAST_CHILD] = (long) id << 32 | c;
        }
        n[c + CALLS]++;
        st[STATE + d] = (long) c << 32 | id;
        st[DEPTH] = d + 1;
        if (now - st[READ_WALL] >= INTERVAL_NS) readCpu(s, now);
    }

    /**
     * A frame the tree cannot hold (it is full, or the stack is too deep): it and everything it calls are
     * counted in the rows but not timed, and their time goes to the frame below. LAST is parked so that
     * no fast path matches until the skipped frame has returned.
     */
    private static void startSkipping(int s, int id) {
        long[] st = states[s];
        st[SKIPPING] = 1;
        st[PARKED_LAST] = st[LAST];
        st[LAST] = Long.MIN_VALUE;
        countSlowly(enters, id);
    }

    private static void exitFully(int s, int id, long now) {
        long[] st = states[s];
        if (st[SKIPPING] > 0) {
            if (--st[SKIPPING] == 0) st[LAST] = st[PARKED_LAST];
            return;
        }
        int d = (int) st[DEPTH];
        if (d < 0 || STATE + d > st.length) { st[DEPTH] = 0; d = 0; }
        long[] n = nodes[s];
        charge(s, st, n, top(st, d), now);
        if (d > 0 && (int) st[STATE + d - 1] == id) st[DEPTH] = --d;
        else repair(st, n, d, id);
        long since = now - st[READ_WALL];
        // Leaving the outermost instrumented frame (the end of a task, often of the thread): read sooner, so
        // that little of a thread's time is left to estimate after its last reading.
        if (since >= INTERVAL_NS || (d == 0 && since >= OUTERMOST_READ_NS)) readCpu(s, now);
    }

    /** The base of the node of the frame on top of a stack of depth d: the root (0) when it is empty. */
    private static int top(long[] st, int d) {
        return d > 0 ? (int) (st[STATE + d - 1] >>> 32) : 0;
    }

    private static long now() {
        return CLOCK != 0 ? U.getLongVolatile(null, CLOCK) : System.nanoTime();
    }

    /** Charges the wall time since the thread's previous event to the node at base `b`. */
    private static void charge(int s, long[] st, long[] n, int b, long now) {
        long seg = now - st[LAST];
        st[LAST] = now;
        if (seg <= 0) return;
        if (b + NODE > n.length) return;
        n[b + SELF_WALL] += seg;
        if (n[b + PENDING] == 0) touch(s, st, b);
        n[b + PENDING] += seg;
    }

    /** Remembers the node at base `b` as charged since the last CPU reading. */
    private static void touch(int s, long[] st, int b) {
        int[] t = touched[s];
        int k = (int) st[TOUCHED];
        if (k >= t.length) {
            int[] bigger = new int[t.length * 2];
            System.arraycopy(t, 0, bigger, 0, t.length);
            touched[s] = t = bigger;
        }
        t[k] = b;
        st[TOUCHED] = k + 1;
    }

    /**
     * An exit whose method is not on top: pop down to the nearest frame of that method, if there is one.
     * The frames above it lost their exits; each is counted in its node (LOST), so that the agent derives
     * the normal exits exactly.
     */
    private static void repair(long[] st, long[] n, int d, int id) {
        for (int k = d - 2; k >= 0; k--) {
            if ((int) st[STATE + k] == id) {
                for (int j = k + 1; j < d; j++) {
                    int b = (int) (st[STATE + j] >>> 32);
                    if (b + NODE <= n.length) n[b + LOST]++;
                }
                st[REPAIRED] += d - 1 - k;
                st[DEPTH] = k;
                return;
            }
        }
        st[UNMATCHED]++;
    }

    /** Reads the thread's CPU time and apportions the CPU time since the previous reading. */
    private static void readCpu(int s, long now) {
        long cpu = cpuNow();
        long[] st = states[s];
        long[] n = nodes[s];
        int[] t = touched[s];
        int k = (int) st[TOUCHED];
        long dCpu = cpu - st[READ_CPU];
        long total = 0;
        for (int i = 0; i < k; i++) total += n[t[i] + PENDING];
        long given = 0;
        for (int i = 0; i < k; i++) {
            int b = t[i];
            long p = n[b + PENDING];
            n[b + PENDING] = 0;
            if (dCpu <= 0 || total <= 0) continue;
            long share = (p < (1L << 31) && dCpu < (1L << 31))
                    ? p * dCpu / total
                    : (long) ((double) p / (double) total * (double) dCpu);
            if (share > dCpu - given) share = dCpu - given;
            if (share > 0) {
                n[b + SELF_CPU] += share;
                given += share;
            }
        }
        st[TOUCHED] = 0;
        st[READ_CPU] = cpu;
        st[READ_WALL] = now;
        st[READS]++;
    }

    /** The child (its base) of the node at base `b` for method `id`, made the first time; -1 when the tree is full. */
    private static int child(int s, int b, int id) {
        long key = (long) b << 32 | id;
        long[] h = children[s];
        int i = slotOf(key, h.length);
        for (long x; (x = h[i]) != 0; i = (i + 2) & (h.length - 1)) {
            if (x == key) return (int) h[i + 1];
        }
        long[] st = states[s];
        int node = (int) st[NODES];
        if (node >= MAX_NODES) return -1;
        long[] n = nodes[s];
        if ((node + 1) * NODE > n.length) {
            long[] bigger = new long[n.length * 2];
            System.arraycopy(n, 0, bigger, 0, n.length);
            nodes[s] = n = bigger;
        }
        int c = node * NODE;
        n[c + PARENT_METHOD] = (long) (b / NODE) << 32 | id;
        st[NODES] = node + 1;
        h[i] = key;
        h[i + 1] = c;
        // At most a quarter full (entries take two longs: 8 longs per node), so that nearly every key sits in
        // the slot it hashes to, the only one the fast path reads.
        if (8L * (node + 1) > h.length) rehash(s);
        return c;
    }

    private static void rehash(int s) {
        long[] h = children[s];
        long[] bigger = new long[h.length * 2];
        for (int j = 0; j < h.length; j += 2) {
            long x = h[j];
            if (x == 0) continue;
            int i = slotOf(x, bigger.length);
            while (bigger[i] != 0) i = (i + 2) & (bigger.length - 1);
            bigger[i] = x;
            bigger[i + 1] = h[j + 1];
        }
        children[s] = bigger;
    }

    /** Doubles the thread's state and stack array; null (and counted) beyond MAX_DEPTH frames. */
    private static long[] growStack(int s) {
        long[] st = states[s];
        if (st.length - STATE >= MAX_DEPTH) { st[TRUNCATED]++; return null; }
        long[] bigger = new long[STATE + 2 * (st.length - STATE)];
        System.arraycopy(st, 0, bigger, 0, st.length);
        states[s] = bigger;
        return bigger;
    }

    /**
     * The current thread's slot; -1 when it has none. Thread ids are unique, so a thread whose tid is below
     * `direct` simply owns slot tid: the hot path is one load of the tid and one of the slot's counts, with no
     * search and no compare against an owner. Larger tids (long-running programs that make many threads)
     * claim a slot in the overflow part [direct, length) by CAS, found by open addressing, and give it back
     * when they end (retire()), so the overflow slots bound the threads alive at once, not those of the run.
     */
    private static int slot() {
        long tid = U.getLong(Thread.currentThread(), TID);
        if (tid > 0 && tid < DIRECT && enters[(int) tid] != null) return (int) tid;
        return claim(tid);
    }

    /** First probe of a thread (or any probe of an overflow thread): its slot, made ready; -1 when none. */
    private static int claim(long tid) {
        if (tid <= 0) { add(dropped, 1); return -1; }
        long[] o = tids;
        if (tid < DIRECT) {
            int i = (int) tid;
            o[i] = tid;
            init(i);
            return i;
        }
        int overflow = o.length - DIRECT;
        // A few rounds: a CAS lost to another thread's claim of the same free slot looks again.
        for (int round = 0; overflow > 0 && round < 4; round++) {
            int i = DIRECT + (int) (tid % overflow);
            int free = -1;
            long freeWas = 0;
            // Up to the thread's own slot or a never-used one (the end of every chain); freed slots are passed
            // over, since the thread's slot may lie beyond one, and the first of them is remembered.
            for (int probes = 0; probes < overflow; probes++) {
                long x = o[i];
                if (x == tid) return enters[i] == null ? -1 : i;
                if (x == -1 || x == FREED) {
                    if (free < 0) { free = i; freeWas = x; }
                    if (x == -1) break;
                }
                i = i + 1 < o.length ? i + 1 : DIRECT;
            }
            if (free < 0) break;
            if (U.compareAndSetLong(o, LONGS + free * LONG_SCALE, freeWas, tid)) {
                init(free);
                return free;
            }
        }
        add(dropped, 1);
        return -1;
    }

    /** Makes slot i ready for the current thread, which alone uses it. Its entries row is set last: until then its probes see no slot. */
    private static void init(int i) {
        owners[i] = Thread.currentThread();
        if (TIMED) {
            long now = now();
            long cpu = cpuNow();
            long[] st = new long[STATE + 256];
            st[LAST] = now;
            st[READ_WALL] = now;
            st[FIRST_WALL] = now;
            st[READ_CPU] = cpu;
            st[FIRST_CPU] = cpu;
            st[NODES] = 1;
            nodes[i] = new long[256 * NODE];
            children[i] = new long[2048];
            touched[i] = new int[64];
            states[i] = st;
        }
        unwinds[i] = new long[1024];
        // Under LOCK, so that a reserve() running meanwhile either sees this row or has set the length it gets.
        synchronized (LOCK) {
            enters[i] = new long[enterRowLength];
        }
    }

    // ---- counts

    private static void add(long[] table, int index) {
        U.getAndAddLong(table, LONGS + index * LONG_SCALE, 1L);
    }

    /** One event of method `id` of a thread without a slot: an atomic add in its page of `pages`. */
    private static void shared(long[][] pages, int id) {
        int p = id >>> PAGE_SHIFT;
        long[] page = (long[]) U.getReferenceAcquire(pages, REFS + p * REF_SCALE);
        if (page == null) {
            U.compareAndSetReference(pages, REFS + p * REF_SCALE, null, new long[PAGE]);
            page = (long[]) U.getReferenceAcquire(pages, REFS + p * REF_SCALE);
        }
        add(page, id & (PAGE - 1));
    }

    /** The shared pages as one array by method id (read under LOCK, or racing with atomic adds: each seen once). */
    private static long[] flat(long[][] pages) {
        long[] out = new long[pages.length << PAGE_SHIFT];
        for (int p = 0; p < pages.length; p++) {
            long[] page = (long[]) U.getReferenceAcquire(pages, REFS + p * REF_SCALE);
            if (page == null) continue;
            for (int j = 0; j < PAGE; j++) out[(p << PAGE_SHIFT) + j] = U.getLongVolatile(page, LONGS + j * LONG_SCALE);
        }
        return out;
    }

    // ---- thread end

    /**
     * Called from JVMTI ThreadEnd on the ending thread, which runs no instrumented code after it (HeapProxy's
     * retireThread; agent/src/thread_rows.rs): a thread with an overflow slot hands its counts, and in times
     * mode its tree, to slot 0, the threads that ended, and frees the slot for another thread. So the overflow
     * slots hold the threads alive, not every thread of the run. A probe that still ran on the thread afterwards would
     * find no rows and claim a slot again: counted all the same.
     */
    static void retire() {
        if (MAX_IDS < 2) return;
        long tid = U.getLong(Thread.currentThread(), TID);
        // A direct slot is never another thread's (tids are unique), so it is kept: the thread stays one entry
        // of its own in the reports (its name, its CPU time), as every thread of a run with fewer than 16,384
        // tids is. Only overflow slots, which other threads need, are handed over.
        if (tid < DIRECT) {
            if (tid > 0) ended[(int) tid] = true;
            return;
        }
        int s = find(tid);
        if (s <= 0) return;
        synchronized (LOCK) {
            if (enters[0] == null) init0();
            fold(enters[s], enters, 0);
            long[][] replaced = replacedEnters[s];
            if (replaced != null) for (long[] r : replaced) fold(r, enters, 0);
            replacedEnters[s] = null;
            fold(unwinds[s], unwinds, 0);
            if (TIMED) foldTree(s);
            enters[s] = null;
            unwinds[s] = null;
            if (TIMED) { nodes[s] = null; children[s] = null; touched[s] = null; states[s] = null; }
            owners[s] = null;
        }
        if (s >= DIRECT) U.putLongRelease(tids, LONGS + s * LONG_SCALE, FREED);
    }

    /** The current thread's slot without claiming one; -1 if it has none (counted as an event without one). */
    private static int found() {
        int s = find(U.getLong(Thread.currentThread(), TID));
        if (s < 0) add(dropped, 1);
        return s;
    }

    /** The slot of thread `tid` without claiming one: tid's, or the overflow slot holding tid; -1 if none. */
    private static int find(long tid) {
        if (tid <= 0) return -1;
        if (tid < DIRECT) return enters[(int) tid] != null ? (int) tid : -1;
        int overflow = tids.length - DIRECT;
        if (overflow <= 0) return -1;
        int i = DIRECT + (int) (tid % overflow);
        for (int probes = 0; probes < overflow; probes++) {
            long x = tids[i];
            if (x == tid) return enters[i] != null ? i : -1;
            if (x == -1) return -1;
            i = i + 1 < tids.length ? i + 1 : DIRECT;
        }
        return -1;
    }

    /** Slot 0, the threads that ended: rows, and in times mode a tree whose state starts with no time. */
    private static void init0() {
        if (TIMED) {
            long[] st = new long[STATE + 1];
            st[NODES] = 1;
            nodes[0] = new long[256 * NODE];
            children[0] = new long[2048];
            touched[0] = new int[1];
            states[0] = st;
        }
        unwinds[0] = new long[1024];
        enters[0] = new long[1024];
    }

    /** Adds `row` into table[to], growing it (under LOCK: only retire() writes slot 0). */
    private static void fold(long[] row, long[][] table, int to) {
        if (row == null) return;
        long[] t = table[to];
        if (t.length < row.length) {
            long[] bigger = new long[row.length];
            System.arraycopy(t, 0, bigger, 0, t.length);
            table[to] = t = bigger;
        }
        for (int id = 1; id < row.length; id++) t[id] += row[id];
    }

    /**
     * Merges the ending thread's tree into slot 0's, node by call path. Its CPU time is read now, on the
     * thread itself, so that none is left to estimate; frames still on its stack (it died inside a call) can
     * never return: they count as lost, as a repair would count them, which keeps the derived exits exact.
     */
    private static void foldTree(int s) {
        long[] st = states[s];
        // The time since the thread's last event is not charged (Thread.exit, not the program), as for a
        // thread still running at the report.
        readCpu(s, now());
        long[] n = nodes[s];
        int d = (int) Math.max(0, Math.min(st[DEPTH], st.length - STATE));
        for (int k = 0; k < d; k++) {
            int b = (int) (st[STATE + k] >>> 32);
            if (b + NODE <= n.length) n[b + LOST]++;
        }
        long[] to = states[0];
        to[REPAIRED] += st[REPAIRED] + d;
        to[UNMATCHED] += st[UNMATCHED];
        to[TRUNCATED] += st[TRUNCATED] + st[SKIPPING];
        to[READS] += st[READS];
        to[READ_CPU] += st[READ_CPU] - st[FIRST_CPU];
        to[READ_WALL] += st[READ_WALL] - st[FIRST_WALL];
        int made = (int) Math.min(st[NODES], n.length / NODE);
        // A child is always made after its parent, so one pass in order maps every parent first.
        int[] into = new int[made];
        for (int i = 1; i < made; i++) {
            int b = i * NODE;
            int parent = (int) (n[b + PARENT_METHOD] >>> 32);
            int id = (int) n[b + PARENT_METHOD];
            int p = parent < i ? into[parent] : 0;
            int c = child(0, p, id);
            if (c < 0) {
                // Slot 0's tree is full: the calls stay exact (in its rows, untimed) and the time goes to the
                // nearest ancestor it holds.
                add(dropped, 2);
                enters[0] = grown(enters[0], id);
                enters[0][id] += n[b + CALLS];
                c = p;
            } else {
                nodes[0][c + CALLS] += n[b + CALLS];
                nodes[0][c + LOST] += n[b + LOST];
            }
            long[] m = nodes[0];
            m[c + SELF_WALL] += n[b + SELF_WALL];
            m[c + SELF_CPU] += n[b + SELF_CPU];
            into[i] = c;
        }
        long[] m = nodes[0];
        m[SELF_WALL] += n[SELF_WALL];
        m[SELF_CPU] += n[SELF_CPU];
    }

    private static long[] grown(long[] row, int id) {
        if (id < row.length) return row;
        int n = row.length;
        while (n <= id) n *= 2;
        long[] bigger = new long[n];
        System.arraycopy(row, 0, bigger, 0, row.length);
        return bigger;
    }

    /** Slots holding a thread's rows now (the threads that ended hold none); for tests and diagnosis. */
    public static int rowsHeld() {
        synchronized (LOCK) {
            int n = 0;
            for (int s = 1; s < enters.length; s++) if (enters[s] != null) n++;
            return n;
        }
    }
}
