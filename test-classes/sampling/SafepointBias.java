/**
 * Safepoint bias: "worker" spends nearly all its time in spin(), a counted loop that C2 compiles without a
 * safepoint poll under -XX:-UseCountedLoopSafepoints, and a sliver in tiny(), whose long-indexed loop
 * polls at every iteration. A sampler that walks stacks at safepoints (GetStackTrace) can only see the
 * thread at a poll, so it credits tiny() and the driver loop with spin()'s time; AsyncGetCallTrace sees
 * where the thread really is.
 *
 * java -XX:-UseCountedLoopSafepoints SafepointBias [SECONDS]   (default 2)
 */
public class SafepointBias {
    static volatile long sink;

    static long spin(long x) {
        for (int i = 0; i < 2_000_000; i++) {
            x = x * 6364136223846793005L + i;
        }
        return x;
    }

    static long tiny(long x) {
        for (long i = 0; i < 50; i++) {
            x ^= i;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 2;
        Thread worker = new Thread(() -> {
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long x = 1;
            while (System.nanoTime() < end) {
                x = spin(x);
                x = tiny(x);
            }
            sink = x;
        }, "worker");
        worker.start();
        worker.join();
        System.out.println("done " + (sink & 1));
    }
}
