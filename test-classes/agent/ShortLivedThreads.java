// Exact counts with many short-lived threads (tests/agent.rs). 200 platform threads, in waves of 20, each
// allocate 1000 Worker objects, 50 long[4] at one site and one int[2][3], then end; on JDK 21+ 50 virtual
// threads do the same. Meanwhile main keeps allocating Mainly objects and reads the Worker count the way
// instr.Counts does (HeapProxy.classSlotOf and instanceCounts): while threads end and hand their counts over, no
// read may exceed what can have been allocated or fall below an earlier one. After the last thread ended the count
// must be exact and the ended threads must hold no rows. With the argument `reset`, the counts are then reset
// (HeapProxy.resetAllocations, as instr.Counts.reset) and one more wave runs: the counts, and the exit report,
// are those of that wave (and of main since the reset). Prints what main made and saw; the test checks the exit
// report, made after every worker ended.
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

public class ShortLivedThreads {
    static class Worker { int v; }
    static class Mainly { int v; }

    static final int PLATFORM = 200, WAVE = 20, VIRTUAL = 50, PER_THREAD = 1000, ARRAYS = 50;
    static volatile Object sink;

    static MethodHandle slotOf, counts;
    static long mainly, reads, previous;
    /** Reads made by main so far: a worker waits for some, so that the wave ends while main is still reading. */
    static volatile long readsDone;

    public static void main(String[] args) throws Throwable {
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        Class<?> h = Class.forName("java.lang.HeapProxy", false, null);
        slotOf = l.findStatic(h, "classSlotOf", MethodType.methodType(int.class, Class.class));
        counts = l.findStatic(h, "instanceCounts", MethodType.methodType(long[].class));
        MethodHandle rowsHeld = l.findStatic(h, "threadRowsHeld", MethodType.methodType(int.class));
        MethodHandle reset = l.findStatic(h, "resetAllocations", MethodType.methodType(void.class));

        // Virtual threads through reflection: this class compiles with JDK 17 too.
        Object virtualBuilder = null;
        java.lang.reflect.Method unstarted = null;
        int virtual = 0;
        try {
            virtualBuilder = Thread.class.getMethod("ofVirtual").invoke(null);
            unstarted = Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
            virtual = VIRTUAL;
        } catch (NoSuchMethodException e) {
            // JDK < 21: platform threads only.
        }
        long expected = (long) (PLATFORM + virtual) * PER_THREAD;
        for (int first = 0; first < PLATFORM + virtual; first += WAVE) {
            Thread[] wave = new Thread[Math.min(WAVE, PLATFORM + virtual - first)];
            for (int i = 0; i < wave.length; i++) {
                wave[i] = first + i < PLATFORM ? new Thread(work(i))
                        : (Thread) unstarted.invoke(virtualBuilder, work(i));
            }
            run(wave, expected);
        }
        exactly(expected);
        int held = (int) rowsHeld.invoke();
        if (args.length > 0 && args[0].equals("reset")) {
            reset.invoke();
            mainly = 0;
            previous = 0;
            exactly(0);
            Thread[] wave = new Thread[WAVE];
            for (int i = 0; i < wave.length; i++) wave[i] = new Thread(work(i));
            run(wave, (long) WAVE * PER_THREAD);
            exactly((long) WAVE * PER_THREAD);
            System.out.println("threads after reset " + WAVE);
        }
        System.out.println("mainly " + mainly);
        System.out.println("virtual " + virtual);
        System.out.println("reads " + reads);
        System.out.println("rows held " + held);
    }

    /**
     * Starts the wave, then allocates and reads until all of it has ended. Worker i waits for 2 + i % 5 of
     * those reads before it allocates, so that threads end (and hand their counts over) while main is reading.
     */
    static void run(Thread[] wave, long most) throws Throwable {
        for (Thread t : wave) {
            t.setDaemon(true); // a failed check must not leave the VM waiting for them
            t.start();
        }
        boolean running = true;
        while (running) {
            for (int i = 0; i < 100; i++) {
                sink = new Mainly();
                mainly++;
            }
            long n = workers();
            reads++;
            if (n < previous || n > most) {
                throw new AssertionError("read " + reads + ": " + n + " Worker objects after " + previous
                        + " (at most " + most + " can exist)");
            }
            previous = n;
            readsDone = reads;
            running = false;
            for (Thread t : wave) running |= t.isAlive();
        }
        for (Thread t : wave) t.join();
    }

    static Runnable work(int i) {
        long gate = readsDone + 2 + i % 5;
        return () -> {
            while (readsDone < gate) Thread.yield();
            for (int k = 0; k < PER_THREAD; k++) sink = new Worker();
            for (int k = 0; k < ARRAYS; k++) sink = new long[4];
            sink = new int[2][3];
        };
    }

    static void exactly(long expected) throws Throwable {
        long n = workers();
        if (n != expected) throw new AssertionError(n + " Worker objects counted, " + expected + " made");
    }

    static long workers() throws Throwable {
        int slot = (int) slotOf.invoke(Worker.class);
        long[] c = (long[]) counts.invoke();
        return slot >= 0 && slot < c.length ? c[slot] : 0;
    }
}
