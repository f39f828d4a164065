/**
 * Uncontended locking, timed: one thread enters and leaves a monitor that escapes (so C2 cannot elide
 * it) ROUNDS x 20M times; prints the best round in ns per enter/exit pair. Run by locks.sh with and
 * without the thread profiler: JVMTI reports only contended enters, so the two must be equal.
 */
public class UncontendedLocks {
    static Object lock = new Object();
    static long counter;

    static void bump() {
        synchronized (lock) {
            counter++;
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        final int n = 20_000_000;
        double best = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                bump();
            }
            best = Math.min(best, (System.nanoTime() - t0) / (double) n);
        }
        System.out.printf("ns_per_lock: %.3f (counter %d)%n", best, counter);
    }
}
